// @ts-check
/**
 * Server-Sent Events read with fetch (EventSource can't send the Authorization header): each
 * event's JSON goes to `onEvent`; a dropped stream is opened again after a backoff — resuming with
 * Last-Event-ID, so nothing is missed or told twice — unless the stream said it was the last
 * event (`isLast`) or the server refused it (4xx).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, authRequired, withAuth } from "./api.js";

/** @typedef {"connecting" | "live" | "reconnecting" | "ended" | "error"} StreamState */

/**
 * @param {string} path
 * @param {{ onEvent: (type: string, data: any) => void, onState: (state: StreamState, error?: ApiError) => void, isLast?: (type: string, data: any) => boolean }} handlers
 * @returns {() => void} stops the stream
 */
export function subscribe(path, handlers) {
  let stopped = false;
  /** @type {AbortController | undefined} */
  let controller;
  let retryMs = 1000;
  /** @type {string | undefined} the last event id seen: a reconnect resumes after it (the server's log is durable) */
  let lastEventId;

  const read = async () => {
    controller = new AbortController();
    const headers = withAuth(lastEventId === undefined ? { accept: "text/event-stream" } : { accept: "text/event-stream", "last-event-id": lastEventId });
    const res = await fetch(path, { headers, signal: controller.signal });
    // A job's stream resumed after its last event: nothing more will come.
    if (res.status === 204) return true;
    if (!res.ok || !res.body) {
      if (res.status === 401) authRequired();
      const json = await res.json().catch(() => undefined);
      throw new ApiError(res.status, json?.error?.code ?? "HttpError", json?.error?.message ?? `The server answered ${res.status}.`);
    }
    handlers.onState("live");
    retryMs = 1000;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = "message";
        /** @type {string | undefined} */
        let id;
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) type = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          else if (line.startsWith("id:")) id = line.slice(3).trim();
        }
        if (data.length === 0) continue; // a comment: keepalive
        const json = JSON.parse(data.join("\n"));
        if (stopped) return true;
        if (id) lastEventId = id;
        handlers.onEvent(type, json);
        if (handlers.isLast?.(type, json)) return true;
      }
    }
  };

  const run = async () => {
    handlers.onState("connecting");
    while (!stopped) {
      try {
        if (await read()) {
          if (!stopped) handlers.onState("ended");
          return;
        }
      } catch (err) {
        if (stopped) return;
        if (err instanceof ApiError && err.status < 500) return handlers.onState("error", err);
      }
      if (stopped) return;
      handlers.onState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      retryMs = Math.min(retryMs * 2, 15_000);
    }
  };
  void run();
  return () => {
    stopped = true;
    controller?.abort();
  };
}

/**
 * The stream as a hook: opened while the component shows `path` (none when null), closed after.
 * @param {string | null} path
 * @param {(type: string, data: any) => void} onEvent
 * @param {(type: string, data: any) => boolean} [isLast]
 * @returns {{ state: StreamState, error?: ApiError }}
 */
export function useStream(path, onEvent, isLast) {
  const [status, setStatus] = useState(/** @type {{ state: StreamState, error?: ApiError }} */ ({ state: "connecting" }));
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    if (path === null) return undefined;
    return subscribe(path, { onEvent: (type, data) => handler.current(type, data), onState: (state, error) => setStatus({ state, error }), isLast });
  }, [path]);
  return status;
}
