// @ts-check
/** One job: input, output, error, its timeline, webhook deliveries, and cancel / retry — live. */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, q } from "../lib/api.js";
import { time } from "../lib/format.js";
import { useStream } from "../lib/stream.js";
import { AttachmentsTable } from "../components/attachments.js";
import { CodeBlock, ConfirmButton, LiveIndicator, Notice, PageTitle, ProgressBar, StatusBadge, useAction } from "../components/common.js";

const terminalEvents = ["job.succeeded", "job.failed", "job.canceled"];
const terminalStatuses = ["succeeded", "failed", "canceled"];

/** @param {{ id: string }} props */
export function JobPage({ id }) {
  // A retry starts the job's life over: a fresh stream (the last one ended with its terminal event).
  const [generation, setGeneration] = useState(0);
  return html`<${JobView} key=${generation} id=${id} onRetried=${() => setGeneration((g) => g + 1)} />`;
}

/** @param {{ id: string, onRetried: () => void }} props */
function JobView({ id, onRetried }) {
  const [job, setJob] = useState(/** @type {any} */ (null));
  const [deliveries, setDeliveries] = useState(/** @type {any[]} */ ([]));
  const [seen, setSeen] = useState(/** @type {Array<{ type: string, at: string }>} */ ([]));
  const [missing, setMissing] = useState(/** @type {ApiError | null} */ (null));
  const [notice, run, busy] = useAction();
  const refresh = async () => {
    try {
      const got = (await api("GET", `/v1/jobs/${q(id)}`)).job;
      setJob(got);
      setDeliveries(got.webhookDeliveries ?? []);
    } catch (err) {
      if (err instanceof ApiError) setMissing(err);
      else throw err;
    }
  };
  useEffect(() => void refresh(), []);
  const stream = useStream(
    `/v1/jobs/${q(id)}/events`,
    (type, event) => {
      setJob((/** @type {any} */ old) => ({ ...event.job, webhookDeliveries: old?.webhookDeliveries }));
      if (type !== "job.snapshot") setSeen((old) => [...old, { type, at: event.at }]);
      // Deliveries are not in events: read them again once the job is done.
      if (terminalEvents.includes(type)) void refresh();
    },
    // The server ends a job's stream once the job is terminal (after a snapshot of a finished one, too).
    (_type, event) => terminalStatuses.includes(event.job?.status),
  );
  if (missing) return html`<section><${PageTitle}>Job<//><p class="notice-error" role="alert">${missing.message}</p></section>`;
  if (!job) return html`<section><${PageTitle}>Job<//><p>Loading…</p></section>`;
  const canCancel = (job.status === "waiting" || job.status === "queued" || job.status === "running") && !job.cancelRequested;
  const canRetry = job.status === "failed" || job.status === "canceled";
  return html`<section aria-labelledby="job-title">
    <${PageTitle}><span id="job-title">Job <code>${job.id}</code></span><//>
    <div class="toolbar">
      <p class="row"><${StatusBadge} status=${job.status} />${job.cancelRequested && job.status === "running" ? html`<span class="badge">cancel requested</span>` : null}
        <a href="/ui/queues/${q(job.queue)}">${job.queue}</a> <a href="/ui/jobs?queue=${q(job.queue)}">all its jobs</a></p>
      ${terminalStatuses.includes(job.status) ? null : html`<${LiveIndicator} state=${stream.state} />`}
    </div>
    <div class="row actions">
      ${canCancel
        ? html`<${ConfirmButton} label="Cancel job…" confirmLabel="Cancel job" danger disabled=${busy}
            question=${job.status === "running" ? "Ask the worker running this job to stop? It is canceled once the worker stops (or its lease ends)." : "Cancel this job? It will not run."}
            onConfirm=${() => run(async () => { const j = (await api("POST", `/v1/jobs/${q(id)}/cancel`)).job; setJob(j); return j.status === "canceled" ? "Canceled." : "Cancel requested: the worker sees it at its next heartbeat."; })} />`
        : null}
      ${canRetry
        ? html`<button type="button" class="primary" disabled=${busy} onClick=${() => run(async () => { await api("POST", `/v1/jobs/${q(id)}/retry`); onRetried(); return "Queued again."; })}>Retry job</button>`
        : null}
    </div>
    <${Notice} notice=${notice} />
    ${job.status === "running" && typeof job.progress === "number" ? html`<${ProgressBar} label="Job progress" value=${Math.round(job.progress * 100)} max=${100} />` : null}

    <dl class="details">
      <div><dt>Attempt</dt><dd>${job.attempt} of ${job.maxAttempts}</dd></div>
      <div><dt>Priority</dt><dd>${job.priority}</dd></div>
      <div><dt>Created</dt><dd>${time(job.createdAt)}</dd></div>
      <div><dt>Started</dt><dd>${time(job.startedAt)}</dd></div>
      <div><dt>Finished</dt><dd>${time(job.finishedAt)}</dd></div>
      ${job.leaseExpiresAt ? html`<div><dt>Lease ends</dt><dd>${time(job.leaseExpiresAt)}</dd></div>` : null}
      ${job.availableAt ? html`<div><dt>Runs from</dt><dd>${time(job.availableAt)}</dd></div>` : null}
      <div><dt>Timeout</dt><dd>${job.timeoutSeconds === null ? "none" : `${job.timeoutSeconds} s`}</dd></div>
      ${job.idempotencyKey ? html`<div><dt>Idempotency key</dt><dd><code>${job.idempotencyKey}</code></dd></div>` : null}
    </dl>

    ${job.error ? html`<h2>Error</h2><div class="error-box" role="note"><strong>${job.error.type ?? "Error"}</strong>: <${CodeBlock} value=${job.error.message} text label="Error message" /></div>` : null}
    <h2>Input</h2>
    <${CodeBlock} value=${job.input} label="Input" />
    <${AttachmentsTable} attachments=${job.attachments} label="Input attachments" />
    <h2>Output</h2>
    ${job.output === null ? html`<p>None${terminalStatuses.includes(job.status) ? "" : " yet"}.</p>` : html`<${CodeBlock} value=${job.output} label="Output" />`}
    <${AttachmentsTable} attachments=${job.outputAttachments} label="Output attachments" />
    ${job.metadata ? html`<h2>Metadata</h2><${CodeBlock} value=${job.metadata} label="Metadata" />` : null}

    <h2>Timeline</h2>
    <${Timeline} job=${job} seen=${seen} />

    <h2>Webhook deliveries</h2>
    ${job.webhook === null
      ? html`<p>No webhook.</p>`
      : deliveries.length === 0
        ? html`<p>None yet (to <code>${job.webhook.url}</code>).</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Webhook deliveries">
            <table>
              <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last attempt</th><th scope="col">Answer</th><th scope="col">Next</th></tr></thead>
              <tbody>
                ${deliveries.map(
                  (d) => html`<tr key=${d.id}><th scope="row">${d.event}</th><td><${StatusBadge} status=${d.status} /></td><td class="num">${d.attempts}</td><td>${time(d.lastAttemptAt)}</td><td>${d.lastStatusCode ?? d.lastError ?? "—"}</td><td>${time(d.nextAttemptAt)}</td></tr>`,
                )}
              </tbody>
            </table>
          </div>`}
  </section>`;
}

/**
 * What is known of the job's life: its submission, the latest attempt's start and its end from the
 * record (the server keeps no per-attempt history), and every event seen while this page was open.
 * @param {{ job: any, seen: Array<{ type: string, at: string }> }} props
 */
function Timeline({ job, seen }) {
  /** @type {Array<{ at: string, text: string }>} */
  const entries = [{ at: job.createdAt, text: "Submitted" }];
  const seenAt = new Set(seen.map((e) => `${e.type}@${e.at}`));
  if (job.startedAt && !seenAt.has(`job.started@${job.startedAt}`)) entries.push({ at: job.startedAt, text: `Attempt ${job.attempt} started` });
  if (job.finishedAt && !seen.some((e) => terminalEvents.includes(e.type))) entries.push({ at: job.finishedAt, text: `Ended ${job.status}` });
  for (const e of seen) entries.push({ at: e.at, text: eventText(e.type) });
  entries.sort((a, b) => a.at.localeCompare(b.at));
  return html`<ol class="timeline">${entries.map((e) => html`<li><time datetime=${e.at}>${time(e.at)}</time> ${e.text}</li>`)}</ol>`;
}

/** @param {string} type */
function eventText(type) {
  return (
    {
      "job.waiting": "Waiting for its parents (dependsOn)",
      "job.queued": "Queued",
      "job.started": "Attempt started",
      "job.progress": "Progress reported",
      "job.cancel_requested": "Cancel requested",
      "job.retrying": "Attempt failed; will retry",
      "job.succeeded": "Succeeded",
      "job.failed": "Failed",
      "job.canceled": "Canceled",
    }[type] ?? type
  );
}
