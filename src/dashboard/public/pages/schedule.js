// @ts-check
/** One schedule: its definition, the next runs, the last one, and pause / resume — live as its runs create their jobs. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { ApiError, api, q } from "../lib/api.js";
import { time } from "../lib/format.js";
import { CodeBlock, LiveIndicator, Notice, PageTitle, useAction } from "../components/common.js";
import { Cadence, LastRun, PauseButton, RunTime, ScheduleState, useRunsRefresh } from "../components/schedule-parts.js";

/** @param {{ name: string }} props */
export function SchedulePage({ name }) {
  const [schedule, setSchedule] = useState(/** @type {any} */ (null));
  const [missing, setMissing] = useState(/** @type {ApiError | null} */ (null));
  const [notice, run, busy] = useAction();
  const reload = async () => {
    try {
      setSchedule((await api("GET", `/v1/schedules/${q(name)}`)).schedule);
    } catch (err) {
      if (err instanceof ApiError) setMissing(err);
      else throw err;
    }
  };
  // Its runs' jobs go to its queue, which is known once it is loaded.
  const stream = useRunsRefresh(schedule ? `/v1/events?queue=${q(schedule.queue)}` : null, `schedule:${name}:`, reload);
  if (missing) return html`<section><${PageTitle}>${name}<//><p class="notice-error" role="alert">${missing.message}</p><p><a href="/ui/schedules">All schedules</a></p></section>`;
  if (!schedule) return html`<section><${PageTitle}>${name}<//><p>Loading…</p></section>`;
  const s = schedule;
  return html`<section aria-labelledby="schedule-title">
    <${PageTitle}><span id="schedule-title">${s.name}</span> <${ScheduleState} paused=${s.paused} /><//>
    <div class="toolbar">
      <nav aria-label="Schedule links" class="row">
        <a href="/ui/schedules">All schedules</a>
        <a href="/ui/queues/${q(s.queue)}">Queue: ${s.queue}</a>
        ${s.lastJobId ? html`<a href="/ui/jobs/${q(s.lastJobId)}">Last run's job</a>` : null}
        <a href="/ui/jobs?queue=${q(s.queue)}">Its queue's jobs</a>
      </nav>
      <${LiveIndicator} state=${stream.state} />
    </div>
    <div class="row actions"><${PauseButton} schedule=${s} busy=${busy} run=${run} onDone=${setSchedule} /></div>
    <${Notice} notice=${notice?.text ? notice : null} />
    <dl class="details">
      <div><dt>Runs</dt><dd><${Cadence} cron=${s.cron} everySeconds=${s.everySeconds} /></dd></div>
      <div><dt>Time zone</dt><dd>${s.timezone}</dd></div>
      <div><dt>Missed runs (catchUp)</dt><dd>${s.catchUp}</dd></div>
      <div><dt>Last run</dt><dd data-field="lastRun"><${LastRun} schedule=${s} /></dd></div>
      <div><dt>Created</dt><dd>${time(s.createdAt)}</dd></div>
      <div><dt>Changed</dt><dd>${time(s.updatedAt)}</dd></div>
    </dl>
    <h2>Next runs</h2>
    ${s.nextRuns.length === 0
      ? html`<p data-field="nextRuns">None${s.paused ? " while paused" : ""}.</p>`
      : html`<ol class="timeline" data-field="nextRuns">${s.nextRuns.map((/** @type {string} */ iso) => html`<li><${RunTime} iso=${iso} timezone=${s.timezone} /></li>`)}</ol>`}
    <p class="hint">Each run's job has the idempotency key <code>schedule:${s.name}:<var>run time</var></code>.</p>
    <h2>Input</h2>
    <${CodeBlock} value=${s.input} label="Input" />
    <h2>Job options</h2>
    <${CodeBlock} value=${s.options} label="Job options" />
  </section>`;
}
