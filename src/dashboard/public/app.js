// @ts-check
/**
 * The dashboard: routes /ui/… to its pages, and asks for a token when the server wants one. It
 * talks to the server only through its public HTTP API.
 */
import { html, render } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { onAuthRequired, setToken, token } from "./lib/api.js";
import { useLocation } from "./lib/router.js";
import { JobPage } from "./pages/job.js";
import { JobsPage } from "./pages/jobs.js";
import { QueuePage } from "./pages/queue.js";
import { QueuesPage } from "./pages/queues.js";
import { SchedulePage } from "./pages/schedule.js";
import { SchedulesPage } from "./pages/schedules.js";
import { SignIn } from "./pages/sign-in.js";
import { WorkersPage } from "./pages/workers.js";

/** @param {{ path: string, query: URLSearchParams }} loc */
function page(loc) {
  const parts = loc.path.replace(/^\/ui\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "queues" && parts[1]) return { nav: "queues", view: html`<${QueuePage} key=${parts[1]} name=${parts[1]} />` };
  if (parts[0] === "jobs" && parts[1]) return { nav: "jobs", view: html`<${JobPage} key=${parts[1]} id=${parts[1]} />` };
  if (parts[0] === "jobs") return { nav: "jobs", view: html`<${JobsPage} queue=${loc.query.get("queue") ?? ""} status=${loc.query.get("status") ?? ""} />` };
  if (parts[0] === "schedules" && parts[1]) return { nav: "schedules", view: html`<${SchedulePage} key=${parts[1]} name=${parts[1]} />` };
  if (parts[0] === "schedules") return { nav: "schedules", view: html`<${SchedulesPage} />` };
  if (parts[0] === "workers") return { nav: "workers", view: html`<${WorkersPage} />` };
  if (parts.length === 0 || parts[0] === "queues") return { nav: "queues", view: null };
  return { nav: "", view: html`<section><h1>Not found</h1><p>No page here. <a href="/ui/">Queues</a></p></section>` };
}

function App() {
  const loc = useLocation();
  const [needsToken, setNeedsToken] = useState(false);
  const [prefix, setPrefix] = useState("");
  // A sign-in starts every page over, with the token.
  const [session, setSession] = useState(0);
  useEffect(() => onAuthRequired(() => setNeedsToken(true)), []);
  const { nav, view } = page(loc);
  return html`<a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/ui/">Sluice</a>
      <nav aria-label="Main">
        <a href="/ui/" aria-current=${nav === "queues" ? "page" : undefined}>Queues</a>
        <a href="/ui/jobs" aria-current=${nav === "jobs" ? "page" : undefined}>Jobs</a>
        <a href="/ui/schedules" aria-current=${nav === "schedules" ? "page" : undefined}>Schedules</a>
        <a href="/ui/workers" aria-current=${nav === "workers" ? "page" : undefined}>Workers</a>
      </nav>
      ${token() && !needsToken ? html`<button type="button" class="link" onClick=${() => { setToken(undefined); location.reload(); }}>Sign out</button>` : null}
    </header>
    <main id="main" key=${session}>
      ${needsToken
        ? html`<${SignIn} onSignedIn=${() => { setNeedsToken(false); setSession((s) => s + 1); }} />`
        : (view ?? html`<${QueuesPage} prefix=${prefix} onPrefix=${setPrefix} />`)}
    </main>`;
}

render(html`<${App} />`, /** @type {HTMLElement} */ (document.getElementById("app")));
