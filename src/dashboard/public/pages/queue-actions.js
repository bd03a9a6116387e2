// @ts-check
/** What an operator can do to a queue: pause it, send a test message, purge it, redrive it, change its attributes. */
import { html } from "htm/preact";
import { api, q } from "../lib/api.js";
import { count } from "../lib/format.js";
import { ConfirmButton, Notice, ProgressBar, StatusBadge, useAction } from "../components/common.js";

/** @param {HTMLFormElement} form */
function fields(form) {
  return Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v).trim()]));
}

/** @param {{ queue: any }} props */
export function SendForm({ queue }) {
  const [notice, run, busy] = useAction();
  const fifo = queue.attributes.fifo;
  /** @param {SubmitEvent} e */
  const submit = (e) => {
    e.preventDefault();
    const form = /** @type {HTMLFormElement} */ (e.currentTarget);
    const f = fields(form);
    /** @type {Record<string, unknown>} */
    const body = { body: f.body };
    if (f.messageGroupId) body.messageGroupId = f.messageGroupId;
    if (f.messageDeduplicationId) body.messageDeduplicationId = f.messageDeduplicationId;
    if (f.delaySeconds) body.delaySeconds = Number(f.delaySeconds);
    if (f.priority) body.priority = Number(f.priority);
    void run(async () => {
      const { message } = await api("POST", `/v1/queues/${q(queue.name)}/messages`, body);
      form.reset();
      return `Sent message ${message.messageId}.`;
    });
  };
  return html`<details class="panel">
    <summary>Send a test message</summary>
    <form onSubmit=${submit} class="stack">
      <label>Body <textarea name="body" required rows="4" spellcheck="false"></textarea></label>
      ${fifo
        ? html`<label>Message group id <input name="messageGroupId" required maxlength="128" /></label>
            <label>Deduplication id <input name="messageDeduplicationId" maxlength="128" aria-describedby="dedup-hint" /></label>
            <p id="dedup-hint" class="hint">Needed unless the queue deduplicates by content.</p>`
        : html`<label>Delay, seconds <input name="delaySeconds" type="number" min="0" max="900" inputmode="numeric" /></label>`}
      <label>Priority, 0–9 <input name="priority" type="number" min="0" max="9" inputmode="numeric" /></label>
      <div class="row"><button class="primary" disabled=${busy}>Send</button></div>
      <${Notice} notice=${notice} />
    </form>
  </details>`;
}

/**
 * Pauses or resumes the queue on every node: while paused, leases and receives return nothing.
 * @param {{ queue: any }} props
 */
export function PauseToggle({ queue }) {
  const [notice, run, busy] = useAction();
  const paused = queue.paused === true;
  const toggle = () =>
    run(async () => {
      const answer = await api("PUT", `/v1/queues/${q(queue.name)}`, { paused: !paused });
      return answer.queue.paused ? "Paused: leases and receives return nothing until it resumes." : "Resumed.";
    });
  return html`<div class="pause row">
    <button type="button" disabled=${busy} onClick=${toggle}>${paused ? "Resume queue" : "Pause queue"}</button>
    <${Notice} notice=${notice} />
  </div>`;
}

/** @param {{ queue: any }} props */
export function PurgeButton({ queue }) {
  const [notice, run, busy] = useAction();
  const m = queue.stats.messages;
  const total = m.visible + m.inFlight + m.delayed;
  return html`<div class="purge">
    <${ConfirmButton}
      label="Purge…"
      confirmLabel="Purge"
      danger
      disabled=${busy}
      question=${`Delete every message of ${queue.name} (${count(total)} a moment ago)? Live jobs among them are canceled. This can't be undone.`}
      onConfirm=${() => run(async () => `Purged ${count((await api("POST", `/v1/queues/${q(queue.name)}/purge`)).deleted)} messages.`)}
    />
    <${Notice} notice=${notice} />
  </div>`;
}

/**
 * Only a dead-letter queue (one that some queue dead-letters into) can be redriven; a queue that
 * was one and still has a redrive on record keeps showing it.
 * @param {{ queue: any, redrives: any[], deadLetterSources: string[] }} props
 */
export function RedrivePanel({ queue, redrives, deadLetterSources }) {
  const [notice, run, busy] = useAction();
  if (deadLetterSources.length === 0 && redrives.length === 0) return null;
  const latest = redrives[0];
  const active = latest && (latest.status === "RUNNING" || latest.status === "CANCELLING") ? latest : undefined;
  /** @param {SubmitEvent} e */
  const submit = (e) => {
    e.preventDefault();
    const f = fields(/** @type {HTMLFormElement} */ (e.currentTarget));
    /** @type {Record<string, unknown>} */
    const body = {};
    if (f.target === "queue" && f.destination) body.destination = f.destination;
    if (f.maxPerSecond) body.maxPerSecond = Number(f.maxPerSecond);
    void run(async () => {
      const { task } = await api("POST", `/v1/queues/${q(queue.name)}/redrive`, body);
      return `Redrive started: ${count(task.toMoveCount)} messages to move.`;
    });
  };
  return html`<section class="panel" aria-labelledby="redrive-title">
    <h2 id="redrive-title">Redrive</h2>
    ${deadLetterSources.length > 0 ? html`<p>Dead-letter queue of ${deadLetterSources.map((name, i) => html`${i > 0 ? ", " : ""}<a href="/ui/queues/${q(name)}">${name}</a>`)}.</p>` : null}
    <p class="hint">Moves this dead-letter queue's messages back to the queues they came from (failed jobs run again), or to another queue.</p>
    ${latest
      ? html`<div class="redrive" data-task=${latest.taskHandle}>
          <div class="row">
            <span>Latest redrive: <${StatusBadge} status=${latest.status.toLowerCase()} /> ${count(latest.movedCount)} of ${count(latest.toMoveCount)} moved${latest.destination ? ` to ${latest.destination}` : ""}</span>
            ${latest.status === "RUNNING"
              ? html`<button type="button" disabled=${busy} onClick=${() => run(async () => `Redrive ${(await api("POST", `/v1/redrives/${q(latest.taskHandle)}/cancel`)).task.status.toLowerCase()}.`)}>Cancel redrive</button>`
              : null}
          </div>
          <${ProgressBar} label="Redrive progress" value=${latest.status === "COMPLETED" ? latest.toMoveCount : latest.movedCount} max=${latest.toMoveCount} />
          ${latest.failureReason ? html`<p class="notice-error">Failed: ${latest.failureReason}</p>` : null}
        </div>`
      : null}
    ${active
      ? null
      : html`<form onSubmit=${submit} class="stack">
          <fieldset>
            <legend>Move the messages</legend>
            <label class="choice"><input type="radio" name="target" value="sources" checked /> back to the queues they came from</label>
            <label class="choice"><input type="radio" name="target" value="queue" /> to the queue <input name="destination" aria-label="Destination queue" maxlength="80" autocomplete="off" /></label>
          </fieldset>
          <label>At most, messages per second <input name="maxPerSecond" type="number" min="1" max="500" inputmode="numeric" aria-describedby="rate-hint" /></label>
          <p id="rate-hint" class="hint">Empty: as fast as the server allows.</p>
          <div class="row"><button class="primary" disabled=${busy}>Start redrive</button></div>
        </form>`}
    <${Notice} notice=${notice} />
  </section>`;
}

/** The attributes SQS lets change, with the bounds SQS gives them. */
const numberFields = [
  { name: "visibilityTimeoutSeconds", label: "Visibility timeout, seconds", min: 0, max: 43_200 },
  { name: "delaySeconds", label: "Delay, seconds", min: 0, max: 900 },
  { name: "messageRetentionPeriodSeconds", label: "Retention, seconds", min: 60, max: 1_209_600 },
  { name: "maximumMessageSizeBytes", label: "Maximum message size, bytes", min: 1024, max: 1_048_576 },
  { name: "receiveMessageWaitTimeSeconds", label: "Receive wait (long poll), seconds", min: 0, max: 20 },
  { name: "defaultPriority", label: "Default priority, 0–9", min: 0, max: 9 },
];

/** @param {{ queue: any }} props */
export function AttributesForm({ queue }) {
  const [notice, run, busy] = useAction();
  const a = queue.attributes;
  /** @param {SubmitEvent} e */
  const submit = (e) => {
    e.preventDefault();
    const f = fields(/** @type {HTMLFormElement} */ (e.currentTarget));
    /** @type {Record<string, unknown>} */
    const patch = {};
    for (const { name } of numberFields) if (Number(f[name]) !== a[name]) patch[name] = Number(f[name]);
    const policy = f.deadLetterQueue ? { deadLetterQueue: f.deadLetterQueue, maxReceiveCount: Number(f.maxReceiveCount) } : null;
    if (JSON.stringify(policy) !== JSON.stringify(a.redrivePolicy)) patch.redrivePolicy = policy;
    if (a.fifo && (f.contentBasedDeduplication === "on") !== a.contentBasedDeduplication) patch.contentBasedDeduplication = f.contentBasedDeduplication === "on";
    void run(async () => {
      if (Object.keys(patch).length === 0) return "Nothing to change.";
      await api("PUT", `/v1/queues/${q(queue.name)}/attributes`, patch);
      return `Saved: ${Object.keys(patch).join(", ")}.`;
    });
  };
  return html`<details class="panel" key=${queue.name}>
    <summary>Attributes</summary>
    <form onSubmit=${submit} class="grid-form">
      ${numberFields.map((field) => html`<label>${field.label} <input name=${field.name} type="number" required min=${field.min} max=${field.max} defaultValue=${a[field.name]} inputmode="numeric" /></label>`)}
      <label>Dead-letter queue <input name="deadLetterQueue" maxlength="80" defaultValue=${a.redrivePolicy?.deadLetterQueue ?? ""} aria-describedby="dlq-hint" autocomplete="off" /></label>
      <label>Receives before dead-lettering <input name="maxReceiveCount" type="number" min="1" max="1000" defaultValue=${a.redrivePolicy?.maxReceiveCount ?? 5} inputmode="numeric" /></label>
      <p id="dlq-hint" class="hint">Empty: no dead-letter queue.</p>
      ${a.fifo ? html`<label class="choice"><input type="checkbox" name="contentBasedDeduplication" defaultChecked=${a.contentBasedDeduplication} /> Deduplicate by content</label>` : null}
      <div class="row"><button class="primary" disabled=${busy}>Save attributes</button></div>
      <${Notice} notice=${notice} />
    </form>
  </details>`;
}
