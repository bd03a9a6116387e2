// @ts-check
/** Asks for a bearer token when the server wants one (a 401): read to look, admin to change things. */
import { html } from "htm/preact";
import { PageTitle } from "../components/common.js";
import { setToken, token } from "../lib/api.js";

/** @param {{ onSignedIn: () => void }} props */
export function SignIn({ onSignedIn }) {
  const rejected = token() !== undefined;
  /** @param {SubmitEvent} e */
  const submit = (e) => {
    e.preventDefault();
    const value = String(new FormData(/** @type {HTMLFormElement} */ (e.currentTarget)).get("token") ?? "").trim();
    setToken(value || undefined);
    onSignedIn();
  };
  return html`<section aria-labelledby="sign-in-title" class="sign-in">
    <${PageTitle}><span id="sign-in-title">Sign in</span><//>
    <p>This server needs a bearer token: one with the <code>read</code> scope to look, and <code>admin</code> to purge, redrive, retry or change a queue.</p>
    ${rejected ? html`<p class="notice-error" role="alert">The server did not accept the token given.</p>` : null}
    <form onSubmit=${submit} class="stack">
      <label>Token <input type="password" name="token" required autocomplete="current-password" spellcheck="false" /></label>
      <p class="hint">Kept in this tab only, until it closes.</p>
      <div class="row"><button class="primary">Sign in</button></div>
    </form>
  </section>`;
}
