// @ts-check
/** The queues table: every queue's depth, in-flight, oldest age, dead-letter depth and throughput, live. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { q } from "../lib/api.js";
import { age, count } from "../lib/format.js";
import { useStream } from "../lib/stream.js";
import { LiveIndicator, PageTitle } from "../components/common.js";
import { Sparkline } from "../components/sparkline.js";

/** Queues per page of the table (the API's page limit). */
const pageSize = 100;

/** @param {{ prefix: string, onPrefix: (prefix: string) => void }} props */
export function QueuesPage({ prefix, onPrefix }) {
  const [data, setData] = useState(/** @type {{ at: string, queues: any[], nextCursor: string | null } | null} */ (null));
  const path = `/v1/events/queues?limit=${pageSize}&intervalSeconds=2${prefix ? `&prefix=${q(prefix)}` : ""}`;
  const stream = useStream(path, (type, event) => {
    if (type === "queues") setData(event);
  });
  return html`<section aria-labelledby="queues-title">
    <${PageTitle}><span id="queues-title">Queues</span><//>
    <div class="toolbar">
      <form role="search" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
        <label>Name starts with <input type="search" name="prefix" value=${prefix} onInput=${(/** @type {InputEvent} */ e) => onPrefix(/** @type {HTMLInputElement} */ (e.currentTarget).value)} autocomplete="off" spellcheck="false" /></label>
      </form>
      <${LiveIndicator} state=${stream.state} at=${data?.at} />
    </div>
    ${stream.error ? html`<p class="notice-error" role="alert">${stream.error.message}</p>` : null}
    ${data === null
      ? html`<p>Loading…</p>`
      : data.queues.length === 0
        ? html`<p>No queues${prefix ? html` whose name starts with <code>${prefix}</code>` : ""} yet. Submit a job or create a queue through the SQS API, and it shows here.</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="queues-caption">
            <table class="queues">
              <caption id="queues-caption">${data.queues.length} queue${data.queues.length === 1 ? "" : "s"}${data.nextCursor ? ` (the first ${pageSize}: narrow them by name)` : ""}</caption>
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col" class="num">Visible</th>
                  <th scope="col" class="num">In flight</th>
                  <th scope="col" class="num">Delayed</th>
                  <th scope="col" class="num">Oldest</th>
                  <th scope="col" class="num">Dead letters</th>
                  <th scope="col">Throughput, 2 min</th>
                </tr>
              </thead>
              <tbody>
                ${data.queues.map((queue) => html`<${QueueRow} key=${queue.name} queue=${queue} />`)}
              </tbody>
            </table>
          </div>`}
  </section>`;
}

/** @param {{ queue: any }} props */
function QueueRow({ queue }) {
  const { stats } = queue;
  return html`<tr data-queue=${queue.name}>
    <th scope="row">
      <a href="/ui/queues/${q(queue.name)}">${queue.name}</a>
      ${queue.attributes.fifo ? html` <span class="badge">FIFO</span>` : null}
    </th>
    <td class="num" data-stat="visible">${count(stats.messages.visible)}</td>
    <td class="num" data-stat="inFlight">${count(stats.messages.inFlight)}</td>
    <td class="num" data-stat="delayed">${count(stats.messages.delayed)}</td>
    <td class="num" data-stat="oldest">${age(stats.oldestVisibleAgeSeconds)}</td>
    <td class="num" data-stat="deadLetters">
      ${queue.deadLetterQueue ? html`<a href="/ui/queues/${q(queue.deadLetterQueue)}" aria-label="${count(stats.deadLetterMessages)} in ${queue.deadLetterQueue}">${count(stats.deadLetterMessages)}</a>` : "—"}
    </td>
    <td><${Sparkline} throughput=${stats.throughput} /></td>
  </tr>`;
}
