// @ts-check
/**
 * The dashboard's one way to the server: JSON over its public HTTP API (docs/admin-api.md,
 * docs/jobs-api.md), with the bearer token the operator signed in with, if any. A 401 tells the
 * app to ask for one.
 */

const tokenKey = "sluice.token";

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** @type {Set<() => void>} */
const authListeners = new Set();

/** @param {() => void} listener called when the server asks for a token (401); returns the unsubscribe function */
export function onAuthRequired(listener) {
  authListeners.add(listener);
  return () => void authListeners.delete(listener);
}

export function authRequired() {
  for (const listener of authListeners) listener();
}

/** The token for this tab (sessionStorage: it goes when the tab closes). */
export function token() {
  return sessionStorage.getItem(tokenKey) ?? undefined;
}

/** @param {string | undefined} value */
export function setToken(value) {
  if (value) sessionStorage.setItem(tokenKey, value);
  else sessionStorage.removeItem(tokenKey);
}

/** @param {Record<string, string>} headers */
export function withAuth(headers) {
  const t = token();
  return t ? { ...headers, authorization: `Bearer ${t}` } : headers;
}

/**
 * One request; the parsed JSON answer, or an ApiError with the server's code and message.
 * @param {"GET" | "POST" | "PUT"} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  const headers = withAuth(body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" });
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  /** @type {any} */
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401) authRequired();
    throw new ApiError(res.status, json?.error?.code ?? "HttpError", json?.error?.message ?? `The server answered ${res.status}.`);
  }
  return json;
}

/** @param {string} name */
export const q = (name) => encodeURIComponent(name);
