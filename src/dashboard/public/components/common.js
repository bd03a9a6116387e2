// @ts-check
/** Small pieces every page uses: status badges, notices, confirmations, progress bars, JSON blocks. */
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { hasNavigated } from "../lib/router.js";

/** @param {{ status: string }} props */
export function StatusBadge({ status }) {
  return html`<span class="badge status-${status}">${status}</span>`;
}

/**
 * The live stream's state, said once to screen readers when it changes.
 * @param {{ state: string, at?: string }} props
 */
export function LiveIndicator({ state, at }) {
  const text = state === "live" ? "Live" : state === "reconnecting" ? "Reconnecting…" : state === "connecting" ? "Connecting…" : state === "ended" ? "Stream ended" : "Not live";
  return html`<p class="live live-${state}" role="status"><span class="live-dot" aria-hidden="true"></span>${text}${at ? html` · updated ${new Date(at).toLocaleTimeString()}` : ""}</p>`;
}

/**
 * An action's outcome, announced by screen readers (role=status / alert).
 * @param {{ notice: { kind: "ok" | "error", text: string } | null }} props
 */
export function Notice({ notice }) {
  if (!notice) return html`<div class="notice-slot" role="status"></div>`;
  return html`<div class="notice-slot notice-${notice.kind}" role=${notice.kind === "error" ? "alert" : "status"}>${notice.text}</div>`;
}

/**
 * A button that asks first, in a modal <dialog> (focus moves into it; Escape cancels).
 * @param {{ label: string, question: string, confirmLabel?: string, danger?: boolean, disabled?: boolean, onConfirm: () => void }} props
 */
export function ConfirmButton({ label, question, confirmLabel, danger, disabled, onConfirm }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  return html`<button type="button" class=${danger ? "danger" : ""} disabled=${disabled} onClick=${() => dialog.current?.showModal()}>${label}</button>
    <dialog ref=${dialog} aria-label=${label} onClose=${(/** @type {Event} */ e) => {
      const d = /** @type {HTMLDialogElement} */ (e.currentTarget);
      if (d.returnValue === "confirm") onConfirm();
      d.returnValue = "";
    }}>
      <form method="dialog">
        <p>${question}</p>
        <div class="row">
          <button value="cancel" autofocus>Cancel</button>
          <button value="confirm" class=${danger ? "danger" : "primary"}>${confirmLabel ?? label}</button>
        </div>
      </form>
    </dialog>`;
}

/**
 * @param {{ value: number, max: number, label: string }} props
 */
export function ProgressBar({ value, max, label }) {
  const percent = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 100;
  return html`<div class="progress">
    <div class="progress-track" role="progressbar" aria-label=${label} aria-valuemin="0" aria-valuemax="100" aria-valuenow=${percent} aria-valuetext="${percent} % (${value} of ${max})">
      <div class="progress-fill" style="width: ${percent}%"></div>
    </div>
    <span class="progress-text" aria-hidden="true">${percent} %</span>
  </div>`;
}

/**
 * JSON (or text) in a scrollable block; long ones folded to their first lines.
 * @param {{ value: unknown, label: string, text?: boolean }} props
 */
export function CodeBlock({ value, label, text }) {
  const shown = text ? String(value) : JSON.stringify(value, null, 2);
  const long = shown.length > 2000;
  const [open, setOpen] = useState(!long);
  return html`<div class="code">
    <pre tabindex="0" aria-label=${label}>${open ? shown : `${shown.slice(0, 2000)}…`}</pre>
    ${long ? html`<button type="button" class="link" onClick=${() => setOpen(!open)}>${open ? "Show less" : `Show all (${shown.length} characters)`}</button>` : null}
  </div>`;
}

/**
 * The page's heading, focused when the app moves to its page, so screen readers hear where they
 * landed (on the first load the browser starts at the top, skip link first, as usual).
 * @param {{ children: any }} props
 */
export function PageTitle({ children }) {
  const ref = useRef(/** @type {HTMLHeadingElement | null} */ (null));
  useEffect(() => {
    if (hasNavigated()) ref.current?.focus();
  }, []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

/**
 * Runs an action and reports its outcome as a notice.
 * @returns {[{ kind: "ok" | "error", text: string } | null, (run: () => Promise<string>) => Promise<void>, boolean]}
 */
export function useAction() {
  const [notice, setNotice] = useState(/** @type {{ kind: "ok" | "error", text: string } | null} */ (null));
  const [busy, setBusy] = useState(false);
  const run = async (/** @type {() => Promise<string>} */ action) => {
    setBusy(true);
    setNotice(null);
    try {
      setNotice({ kind: "ok", text: await action() });
    } catch (err) {
      setNotice({ kind: "error", text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };
  return [notice, run, busy];
}
