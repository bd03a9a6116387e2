// @ts-check
/** A peek at a queue's messages: bodies and attributes, read without changing them. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { api, q } from "../lib/api.js";
import { time } from "../lib/format.js";
import { CodeBlock, Notice, StatusBadge, useAction } from "../components/common.js";

/** @param {{ queue: any }} props */
export function PeekPanel({ queue }) {
  const [messages, setMessages] = useState(/** @type {any[] | null} */ (null));
  const [limit, setLimit] = useState(10);
  const [notice, run, busy] = useAction();
  const peek = () =>
    run(async () => {
      const got = (await api("GET", `/v1/queues/${q(queue.name)}/messages?limit=${limit}`)).messages;
      setMessages(got);
      return `${got.length} message${got.length === 1 ? "" : "s"} shown; none was received or changed.`;
    });
  return html`<section class="panel" aria-labelledby="peek-title">
    <h2 id="peek-title">Peek</h2>
    <div class="row">
      <label>Messages <select value=${limit} onChange=${(/** @type {Event} */ e) => setLimit(Number(/** @type {HTMLSelectElement} */ (e.currentTarget).value))}>
        ${[10, 25, 50, 100].map((n) => html`<option value=${n}>${n}</option>`)}
      </select></label>
      <button type="button" onClick=${peek} disabled=${busy}>${messages ? "Peek again" : "Peek"}</button>
    </div>
    <${Notice} notice=${notice} />
    ${messages && messages.length > 0
      ? html`<ol class="messages">
          ${messages.map(
            (m) => html`<li class="message" key=${m.messageId} data-message-id=${m.messageId}>
              <div class="row">
                <code>${m.messageId}</code> <${StatusBadge} status=${m.state} />
                <span>received ${m.receiveCount}×</span> <span>sent ${time(m.sentAt)}</span>
                ${m.state !== "visible" ? html`<span>visible at ${time(m.visibleAt)}</span>` : null}
              </div>
              <${CodeBlock} value=${m.body} text label="Message body" />
              ${Object.keys(m.messageAttributes).length > 0 ? html`<details><summary>Message attributes</summary><${CodeBlock} value=${m.messageAttributes} label="Message attributes" /></details>` : null}
              <details><summary>System attributes</summary><${CodeBlock} value=${m.attributes} label="System attributes" /></details>
            </li>`,
          )}
        </ol>`
      : null}
  </section>`;
}
