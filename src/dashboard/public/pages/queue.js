// @ts-check
/** One queue: its live stats, redrives, actions (send, purge, redrive), a peek, and its attributes. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { q } from "../lib/api.js";
import { age, count, perSecond, rate } from "../lib/format.js";
import { useStream } from "../lib/stream.js";
import { LiveIndicator, PageTitle } from "../components/common.js";
import { Sparkline } from "../components/sparkline.js";
import { AttributesForm, PauseToggle, PurgeButton, RedrivePanel, SendForm } from "./queue-actions.js";
import { PeekPanel } from "./queue-peek.js";

/** @param {{ name: string }} props */
export function QueuePage({ name }) {
  const [data, setData] = useState(/** @type {{ at: string, queue: any, redrives: any[], deadLetterSources: string[] } | null} */ (null));
  const [gone, setGone] = useState(false);
  const stream = useStream(
    `/v1/queues/${q(name)}/events?intervalSeconds=1`,
    (type, event) => {
      if (type === "queue") setData(event);
      else if (type === "gone") setGone(true);
    },
    (type) => type === "gone",
  );
  if (stream.error) {
    return html`<section><${PageTitle}>${name}<//><p class="notice-error" role="alert">${stream.error.message}</p><p><a href="/ui/">All queues</a></p></section>`;
  }
  if (!data) return html`<section><${PageTitle}>${name}<//><p>Loading…</p></section>`;
  const { queue, redrives, deadLetterSources } = data;
  const { stats } = queue;
  const jobs = Object.values(stats.jobs).reduce((a, b) => a + b, 0);
  return html`<section aria-labelledby="queue-title">
    <${PageTitle}><span id="queue-title">${queue.name}</span>${queue.attributes.fifo ? html` <span class="badge">FIFO</span>` : null}${queue.paused ? html` <span class="badge" data-state="paused">Paused</span>` : null}<//>
    <div class="toolbar">
      <nav aria-label="Queue links" class="row">
        <a href="/ui/">All queues</a>
        <a href="/ui/jobs?queue=${q(queue.name)}">Jobs${jobs > 0 ? ` (${count(jobs)})` : ""}</a>
        ${queue.deadLetterQueue ? html`<a href="/ui/queues/${q(queue.deadLetterQueue)}">Dead-letter queue: ${queue.deadLetterQueue}</a>` : null}
      </nav>
      <${LiveIndicator} state=${gone ? "ended" : stream.state} at=${data.at} />
    </div>
    ${gone ? html`<p class="notice-error" role="alert">This queue was deleted.</p>` : null}
    ${gone ? null : html`<${PauseToggle} queue=${queue} />`}

    <h2>Now</h2>
    <dl class="stats">
      <div><dt>Visible</dt><dd data-stat="visible">${count(stats.messages.visible)}</dd></div>
      <div><dt>In flight</dt><dd data-stat="inFlight">${count(stats.messages.inFlight)}</dd></div>
      <div><dt>Delayed</dt><dd data-stat="delayed">${count(stats.messages.delayed)}</dd></div>
      <div><dt>Oldest visible</dt><dd>${age(stats.oldestVisibleAgeSeconds)}</dd></div>
      <div><dt>Dead letters</dt><dd data-stat="deadLetters">${count(stats.deadLetterMessages)}</dd></div>
      <div><dt>Completed</dt><dd>${perSecond(rate(stats.throughput.completed, stats.throughput.bucketSeconds))}</dd></div>
      <div><dt>Sent</dt><dd>${perSecond(rate(stats.throughput.sent, stats.throughput.bucketSeconds))}</dd></div>
      <div class="wide"><dt>Throughput, 2 min</dt><dd><${Sparkline} throughput=${stats.throughput} width=${240} height=${40} /></dd></div>
    </dl>
    ${jobs > 0
      ? html`<dl class="stats jobs">
          ${Object.entries(stats.jobs).map(([status, n]) => html`<div><dt><a href="/ui/jobs?queue=${q(queue.name)}&status=${status}">${status}</a></dt><dd>${count(/** @type {number} */ (n))}</dd></div>`)}
        </dl>`
      : null}

    <${RedrivePanel} queue=${queue} redrives=${redrives} deadLetterSources=${deadLetterSources} />
    <h2>Messages</h2>
    <div class="row actions">
      <${SendForm} queue=${queue} />
      <${PurgeButton} queue=${queue} />
    </div>
    <${PeekPanel} queue=${queue} />
    <${AttributesForm} queue=${queue} />
  </section>`;
}
