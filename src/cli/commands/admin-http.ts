/**
 * The admin commands' HTTP: one request to the server's JSON routes (or the backup route), its
 * errors turned into the SDK's error classes so exitWithError reports them alike.
 */
import { SluiceApiError, SluiceNetworkError } from "@sluice/client";
import type { Connection } from "./sdk-connection.js";

export type { Connection } from "./sdk-connection.js";

export async function adminRequest(conn: Connection, method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (conn.token) headers.authorization = `Bearer ${conn.token}`;
  if (conn.account !== undefined) headers["sluice-account"] = conn.account;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(new URL(path, conn.url), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new SluiceNetworkError(`${method} ${path}: ${cause ?? (err as Error).message}`);
  }
  if (res.ok) return res;
  const text = await res.text();
  let code = `HTTP${res.status}`;
  let message = text.slice(0, 500) || res.statusText;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (parsed.error?.code) code = parsed.error.code;
    if (parsed.error?.message) message = parsed.error.message;
  } catch {
    // Not the documented JSON error shape: the status and raw text say what there is.
  }
  throw new SluiceApiError(code, res.status, message);
}

/** A JSON answer from an admin route. */
export async function adminJson<T>(conn: Connection, method: string, path: string, body?: unknown): Promise<T> {
  return (await (await adminRequest(conn, method, path, body)).json()) as T;
}
