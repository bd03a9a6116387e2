// @ts-check
/** What the schedule pages share: how a schedule's cadence and run times read, pause / resume, and their live refresh. */
import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import { api, q } from "../lib/api.js";
import { useStream } from "../lib/stream.js";

/**
 * "every 15 min", or the cron expression as written.
 * @param {{ cron: string | null, everySeconds: number | null }} schedule
 */
export function Cadence({ cron, everySeconds }) {
  if (cron !== null) return html`<code>${cron}</code>`;
  const n = /** @type {number} */ (everySeconds);
  const [size, unit] = n % 86_400 === 0 ? [n / 86_400, "d"] : n % 3600 === 0 ? [n / 3600, "h"] : n % 60 === 0 ? [n / 60, "min"] : [n, "s"];
  return html`every ${size} ${unit}`;
}

/**
 * A run time as the schedule's own time zone reads it (its cron is written in that zone); the exact
 * instant in `datetime` and as a tooltip.
 * @param {{ iso: string | null, timezone: string }} props
 */
export function RunTime({ iso, timezone }) {
  if (!iso) return html`—`;
  const text = new Intl.DateTimeFormat(undefined, { timeZone: timezone, dateStyle: "medium", timeStyle: "medium" }).format(new Date(iso));
  return html`<time datetime=${iso} title=${iso}>${text}</time>`;
}

/**
 * The last run's time, linked to the job it created (the job the run's idempotency key names).
 * @param {{ schedule: { lastRunAt: string | null, lastJobId: string | null, timezone: string } }} props
 */
export function LastRun({ schedule }) {
  const when = html`<${RunTime} iso=${schedule.lastRunAt} timezone=${schedule.timezone} />`;
  if (!schedule.lastJobId) return when;
  return html`<a href="/ui/jobs/${q(schedule.lastJobId)}" title="The job this run created">${when}</a>`;
}

/** @param {{ paused: boolean }} props */
export function ScheduleState({ paused }) {
  return html`<span class="badge status-${paused ? "paused" : "active"}">${paused ? "paused" : "active"}</span>`;
}

/**
 * Pause or resume (the server answers the schedule as it now is, passed to `onDone`).
 * @param {{ schedule: any, busy: boolean, run: (action: () => Promise<string>) => Promise<void>, onDone: (schedule: any) => void }} props
 */
export function PauseButton({ schedule, busy, run, onDone }) {
  const verb = schedule.paused ? "resume" : "pause";
  const click = () =>
    run(async () => {
      const next = (await api("POST", `/v1/schedules/${q(schedule.name)}/${verb}`)).schedule;
      onDone(next);
      return next.paused ? `Paused ${next.name}: no run creates a job until it is resumed.` : `Resumed ${next.name}: it runs again from its next run.`;
    });
  return html`<button type="button" disabled=${busy} aria-label="${schedule.paused ? "Resume" : "Pause"} ${schedule.name}" onClick=${click}>${schedule.paused ? "Resume" : "Pause"}</button>`;
}

/**
 * Calls `reload` whenever a schedule's run creates its job (its idempotency key starts with
 * `keyPrefix`), as the job event stream of `eventsPath` tells; reloads that come while one is
 * running fold into one after it. Answers the stream's state.
 * @param {string | null} eventsPath none until known
 * @param {string} keyPrefix
 * @param {() => Promise<void>} reload
 */
export function useRunsRefresh(eventsPath, keyPrefix, reload) {
  const state = useRef({ running: false, again: false });
  const latest = useRef(reload);
  latest.current = reload;
  const refresh = async () => {
    if (state.current.running) {
      state.current.again = true;
      return;
    }
    state.current.running = true;
    try {
      do {
        state.current.again = false;
        await latest.current();
      } while (state.current.again);
    } finally {
      state.current.running = false;
    }
  };
  const stream = useStream(eventsPath, (type, event) => {
    if (type === "job.queued" && typeof event.job?.idempotencyKey === "string" && event.job.idempotencyKey.startsWith(keyPrefix)) void refresh();
  });
  // Once at once, and again when the stream is first live: a run between the two is not missed.
  const live = stream.state === "live";
  const seenLive = useRef(false);
  useEffect(() => {
    if (!live && seenLive.current) return;
    if (live) seenLive.current = true;
    void refresh();
  }, [live]);
  return stream;
}
