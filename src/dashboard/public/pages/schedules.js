// @ts-check
/** Every schedule: its queue, cadence, time zone, state, next and last runs, and pause / resume — live as runs create their jobs. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { api, q } from "../lib/api.js";
import { LiveIndicator, Notice, PageTitle, useAction } from "../components/common.js";
import { Cadence, LastRun, PauseButton, RunTime, ScheduleState, useRunsRefresh } from "../components/schedule-parts.js";

/** Schedules per page (the API's default); a refresh reads as many as are shown. */
const pageSize = 100;
/** Next runs shown in a row (the schedule's page shows all the server gives). */
const runsShown = 3;

export function SchedulesPage() {
  const [data, setData] = useState(/** @type {{ schedules: any[], nextCursor: string | null } | null} */ (null));
  const [notice, run, busy] = useAction();
  const [loadError, setLoadError] = useState(/** @type {string | null} */ (null));
  const shown = data?.schedules.length ?? 0;
  const reload = async () => {
    try {
      setData(await api("GET", `/v1/schedules?limit=${Math.min(1000, Math.max(pageSize, shown))}`));
      setLoadError(null);
    } catch (err) {
      setLoadError(err instanceof Error ? err.message : String(err));
    }
  };
  const more = (/** @type {string} */ cursor) =>
    run(async () => {
      const page = await api("GET", `/v1/schedules?limit=${pageSize}&cursor=${q(cursor)}`);
      setData((old) => ({ schedules: [...(old?.schedules ?? []), ...page.schedules], nextCursor: page.nextCursor }));
      return "";
    });
  const stream = useRunsRefresh("/v1/events", "schedule:", reload);
  const replace = (/** @type {any} */ next) => setData((old) => old && { ...old, schedules: old.schedules.map((s) => (s.name === next.name ? next : s)) });
  return html`<section aria-labelledby="schedules-title">
    <${PageTitle}><span id="schedules-title">Schedules</span><//>
    <div class="toolbar">
      <p class="hint">Each run submits one job to its queue. Times are in each schedule's time zone.</p>
      <${LiveIndicator} state=${stream.state} />
    </div>
    ${loadError ? html`<p class="notice-error" role="alert">${loadError}</p>` : null}
    <${Notice} notice=${notice?.text ? notice : null} />
    ${data === null
      ? loadError ? null : html`<p>Loading…</p>`
      : data.schedules.length === 0
        ? html`<p>No schedules yet. Create one with <code>PUT /v1/schedules/{name}</code> or <code>sluice schedules put</code>.</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="schedules-caption">
            <table class="schedules">
              <caption id="schedules-caption">${data.schedules.length} schedule${data.schedules.length === 1 ? "" : "s"}, by name</caption>
              <thead>
                <tr>
                  <th scope="col">Schedule</th>
                  <th scope="col">Queue</th>
                  <th scope="col">Runs</th>
                  <th scope="col">Time zone</th>
                  <th scope="col">State</th>
                  <th scope="col">Next runs</th>
                  <th scope="col">Last run</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${data.schedules.map(
                  (s) => html`<tr key=${s.name} data-schedule=${s.name}>
                    <th scope="row"><a href="/ui/schedules/${q(s.name)}">${s.name}</a></th>
                    <td><a href="/ui/jobs?queue=${q(s.queue)}">${s.queue}</a></td>
                    <td><${Cadence} cron=${s.cron} everySeconds=${s.everySeconds} /></td>
                    <td>${s.timezone}</td>
                    <td data-field="state"><${ScheduleState} paused=${s.paused} /></td>
                    <td data-field="nextRuns">${s.nextRuns.length === 0
                      ? "—"
                      : html`<ol class="runs">${s.nextRuns.slice(0, runsShown).map((/** @type {string} */ iso) => html`<li><${RunTime} iso=${iso} timezone=${s.timezone} /></li>`)}</ol>`}</td>
                    <td data-field="lastRun"><${LastRun} schedule=${s} /></td>
                    <td><${PauseButton} schedule=${s} busy=${busy} run=${run} onDone=${replace} /></td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`}
    ${data?.nextCursor ? html`<div class="row"><button type="button" onClick=${() => more(/** @type {string} */ (data.nextCursor))} disabled=${busy}>Load more</button></div>` : null}
  </section>`;
}
