// @ts-check
/** The jobs browser: one queue's jobs, newest first, filtered by status, kept live by the queue's job events. */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { api, q } from "../lib/api.js";
import { time } from "../lib/format.js";
import { navigate } from "../lib/router.js";
import { useStream } from "../lib/stream.js";
import { LiveIndicator, Notice, PageTitle, StatusBadge, useAction } from "../components/common.js";

const statuses = ["waiting", "queued", "running", "succeeded", "failed", "canceled"];
const pageSize = 50;

/** @param {string} queue @param {string} status */
const jobsHref = (queue, status) => `/ui/jobs?queue=${q(queue)}${status ? `&status=${q(status)}` : ""}`;

/** @param {{ queue: string, status: string }} props */
export function JobsPage({ queue, status }) {
  const [queues, setQueues] = useState(/** @type {any[] | null} */ (null));
  const [notice, run] = useAction();
  useEffect(() => {
    void run(async () => {
      const list = (await api("GET", "/v1/queues?limit=100")).queues;
      setQueues(list);
      // No queue chosen: the first that has jobs.
      const first = list.find((/** @type {any} */ x) => Object.values(x.stats.jobs).some((n) => /** @type {number} */ (n) > 0));
      if (!queue && first) navigate(jobsHref(first.name, status), { replace: true });
      return "";
    });
  }, []);
  return html`<section aria-labelledby="jobs-title">
    <${PageTitle}><span id="jobs-title">Jobs</span><//>
    <form class="toolbar filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
      <label>Queue
        <select name="queue" value=${queue} onChange=${(/** @type {Event} */ e) => navigate(jobsHref(/** @type {HTMLSelectElement} */ (e.currentTarget).value, status))}>
          ${!queue ? html`<option value="">Choose a queue</option>` : null}
          ${(queues ?? []).map((x) => html`<option value=${x.name}>${x.name}</option>`)}
          ${queue && queues && !queues.some((x) => x.name === queue) ? html`<option value=${queue}>${queue}</option>` : null}
        </select>
      </label>
      <label>Status
        <select name="status" value=${status} onChange=${(/** @type {Event} */ e) => navigate(jobsHref(queue, /** @type {HTMLSelectElement} */ (e.currentTarget).value))}>
          <option value="">any</option>
          ${statuses.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
    </form>
    ${notice?.kind === "error" ? html`<${Notice} notice=${notice} />` : null}
    ${queue ? html`<${JobList} key=${`${queue}/${status}`} queue=${queue} status=${status} />` : html`<p>${queues === null ? "Loading…" : "No queue has jobs yet."}</p>`}
  </section>`;
}

/** @param {{ queue: string, status: string }} props */
function JobList({ queue, status }) {
  const [jobs, setJobs] = useState(/** @type {any[] | null} */ (null));
  const [cursor, setCursor] = useState(/** @type {string | null} */ (null));
  const [notice, run, busy] = useAction();
  const load = (/** @type {string | null} */ after) =>
    run(async () => {
      const page = await api("GET", `/v1/queues/${q(queue)}/jobs?limit=${pageSize}${status ? `&status=${q(status)}` : ""}${after ? `&cursor=${q(after)}` : ""}`);
      setJobs((old) => (after && old ? [...old, ...page.jobs] : page.jobs));
      setCursor(page.nextCursor);
      return "";
    });
  useEffect(() => void load(null), []);
  // Each event carries the job as it now is: it replaces its row, or joins the top when it is new.
  const stream = useStream(`/v1/events?queue=${q(queue)}`, (_type, event) => {
    const job = event.job;
    setJobs((old) => {
      if (!old) return old;
      const i = old.findIndex((j) => j.id === job.id);
      const matches = !status || job.status === status;
      if (i >= 0) return matches ? old.map((j, k) => (k === i ? job : j)) : old.filter((_, k) => k !== i);
      return matches ? [job, ...old] : old;
    });
  });
  if (jobs === null) return notice?.kind === "error" ? html`<${Notice} notice=${notice} />` : html`<p>Loading…</p>`;
  return html`<div>
    <${LiveIndicator} state=${stream.state} />
    ${jobs.length === 0
      ? html`<p>No ${status || ""} jobs in ${queue}.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="jobs-caption">
          <table class="jobs">
            <caption id="jobs-caption">${status ? `${status[0].toUpperCase()}${status.slice(1)} jobs` : "Jobs"} in ${queue}, newest first</caption>
            <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col" class="num">Attempt</th><th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Error</th></tr></thead>
            <tbody>
              ${jobs.map(
                (job) => html`<tr key=${job.id} data-job=${job.id}>
                  <th scope="row"><a href="/ui/jobs/${q(job.id)}"><code>${job.id}</code></a></th>
                  <td><${StatusBadge} status=${job.status} />${job.cancelRequested && job.status === "running" ? html` <span class="badge">cancel requested</span>` : null}</td>
                  <td class="num">${job.attempt} / ${job.maxAttempts}</td>
                  <td>${time(job.createdAt)}</td>
                  <td>${time(job.updatedAt)}</td>
                  <td class="error-cell">${job.error?.message ?? ""}</td>
                </tr>`,
              )}
            </tbody>
          </table>
        </div>`}
    ${cursor ? html`<div class="row"><button type="button" onClick=${() => load(cursor)} disabled=${busy}>Load more</button></div>` : null}
    ${notice?.kind === "error" ? html`<${Notice} notice=${notice} />` : null}
  </div>`;
}
