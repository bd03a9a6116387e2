// @ts-check
/**
 * Client-side routing over the History API: links stay plain <a href="/ui/…"> (so they open in a
 * new tab, and keyboards and screen readers treat them as links); a click on one is taken here
 * instead of loading the page again.
 */
import { useEffect, useState } from "preact/hooks";

/** @type {Set<() => void>} */
const listeners = new Set();
let navigated = false;

/** Whether the app has moved to another page since it loaded (then a new page's heading takes the focus). */
export function hasNavigated() {
  return navigated;
}

function changed() {
  navigated = true;
  for (const listener of listeners) listener();
}

/**
 * @param {string} href
 * @param {{ replace?: boolean }} [opts]
 */
export function navigate(href, opts = {}) {
  if (opts.replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  changed();
}

window.addEventListener("popstate", changed);
document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target instanceof Element ? event.target.closest("a") : null;
  if (!link || link.target || link.hasAttribute("download") || link.origin !== location.origin || !link.pathname.startsWith("/ui")) return;
  event.preventDefault();
  if (link.href !== location.href) navigate(link.pathname + link.search);
});

/** The current path and query, re-rendering the caller when they change. */
export function useLocation() {
  const read = () => ({ path: location.pathname, query: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return loc;
}
