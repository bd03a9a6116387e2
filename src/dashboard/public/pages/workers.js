// @ts-check
/** The workers seen in the last minute, on every node: their queues, labels and running jobs (GET /v1/workers). */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { api, q } from "../lib/api.js";
import { PageTitle } from "../components/common.js";
import { count, time } from "../lib/format.js";

/** How often the page reads the list again while it is open (the server writes it once a second). */
const refreshEveryMs = 5_000;

export function WorkersPage() {
  const [workers, setWorkers] = useState(/** @type {any[] | null} */ (null));
  const [loadError, setLoadError] = useState(/** @type {string | null} */ (null));
  const reload = async () => {
    try {
      setWorkers((await api("GET", "/v1/workers")).workers);
      setLoadError(null);
    } catch (err) {
      setLoadError(err instanceof Error ? err.message : String(err));
    }
  };
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), refreshEveryMs);
    return () => clearInterval(timer);
  }, []);
  return html`<section aria-labelledby="workers-title">
    <${PageTitle}><span id="workers-title">Workers</span><//>
    <div class="toolbar">
      <p class="hint">Workers that sent a lease request (with a workerId) in the last 60 s, on any node. The SDKs send one per process.</p>
      <button type="button" onClick=${() => void reload()}>Refresh</button>
    </div>
    ${loadError ? html`<p class="notice-error" role="alert">${loadError}</p>` : null}
    ${workers === null
      ? loadError ? null : html`<p>Loading…</p>`
      : workers.length === 0
        ? html`<p>No workers seen in the last minute. A worker shows here once it leases with a <code>workerId</code> (the SDKs' workers always do).</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="workers-caption">
            <table class="workers">
              <caption id="workers-caption">${workers.length} worker${workers.length === 1 ? "" : "s"}, by id</caption>
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col">Queues</th>
                  <th scope="col">Labels</th>
                  <th scope="col" class="num">Running</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                ${workers.map(
                  (w) => html`<tr key=${w.workerId} data-worker=${w.workerId}>
                    <th scope="row">${w.workerId}</th>
                    <td data-field="queues">${w.queues.map((/** @type {string} */ name, /** @type {number} */ i) => html`${i > 0 ? ", " : ""}<a href="/ui/queues/${q(name)}">${name}</a>`)}</td>
                    <td data-field="labels">${w.labels === null
                      ? "—"
                      : Object.entries(w.labels).map(([k, v], i) => html`${i > 0 ? " " : ""}<code>${k}=${v}</code>`)}</td>
                    <td data-field="running" class="num">${count(w.running)}</td>
                    <td>${time(w.lastSeenAt)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`}
  </section>`;
}
