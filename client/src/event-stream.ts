/**
 * Job event streams (Server-Sent Events) as async iterables: `for await (const e of
 * sluice.events({ queue }))`. Every event's id is durable, so a dropped connection or a restarted
 * server costs nothing: the stream reconnects with Last-Event-ID and the server sends what came
 * after it — each event once. A stream that stays silent past its keep-alives is taken for dead
 * and reconnected the same way.
 */
import { withAttachments } from "./attachment.js";
import { backoffDelayMs, defaultBackoff } from "./backoff.js";
import type { BlobTransfer } from "./blob-transfer.js";
import { type HttpClient, isRetryable, readTextLines } from "./http.js";
import { type Timers, sleep } from "./timers.js";
import type { JobEventMessage, JsonValue } from "./wire.js";

export interface EventStreamOptions {
  /** Resume after this event id (one an earlier stream gave); default: only events from now on. */
  since?: string;
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal;
  /** No byte for this long (the server sends a keep-alive every 15 s): reconnect. Default 45 s. */
  idleTimeoutMs?: number;
}

const terminalEvents = new Set(["job.succeeded", "job.failed", "job.canceled"]);

/** A parsed SSE event: its fields as the spec defines them (data lines joined with "\n"). */
interface RawEvent {
  id?: string;
  event: string;
  data: string;
}

/** Splits SSE lines into events (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
class SseParser {
  private id: string | undefined;
  private event = "";
  private data: string[] = [];

  constructor(private readonly onEvent: (e: RawEvent) => void) {}

  line(line: string): void {
    if (line === "") {
      if (this.data.length > 0) this.onEvent({ id: this.id, event: this.event || "message", data: this.data.join("\n") });
      this.id = undefined;
      this.event = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return; // a comment: the server's keep-alive
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") this.id = value;
    else if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
  }
}

/**
 * Streams `path`'s events, reconnecting after failures with Last-Event-ID. `untilTerminal`: a
 * job's stream, which ends after its terminal event (the server ends it there too).
 */
export async function* eventStream<I = JsonValue, O = JsonValue>(
  http: HttpClient,
  timers: Timers,
  path: string,
  query: Record<string, string | undefined>,
  opts: EventStreamOptions & { untilTerminal?: boolean },
  transfer: BlobTransfer,
): AsyncGenerator<JobEventMessage<I, O>, void, undefined> {
  let lastId = opts.since;
  let failures = 0;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 45_000;
  for (;;) {
    if (opts.signal?.aborted) return;
    // Events reach the loop through a small queue: the reader pushes, this generator yields.
    const queue: RawEvent[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    let failure: unknown;
    // 204: a job's stream resumed after its terminal event; nothing more will come.
    let finished = false;
    const attempt = new AbortController();
    const onAbort = (): void => attempt.abort(opts.signal?.reason);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    let idleCancel = (): void => {};
    const idle = (): void => {
      idleCancel();
      idleCancel = timers.schedule(idleTimeoutMs, () => attempt.abort(new Error(`no event or keep-alive for ${idleTimeoutMs} ms`)));
    };
    const parser = new SseParser((e) => {
      queue.push(e);
      wake?.();
    });
    idle();
    const reading = http
      .requestStream("GET", path, { query, headers: lastId !== undefined ? { "last-event-id": lastId } : {}, signal: attempt.signal, timeoutMs: Number.MAX_SAFE_INTEGER }, "text/event-stream", (res) => {
        if (res.status === 204) finished = true;
        return readTextLines(res, (line) => {
          idle();
          parser.line(line);
        });
      })
      .catch((err: unknown) => (failure = err))
      .finally(() => {
        done = true;
        wake?.();
      });
    try {
      for (;;) {
        const raw = queue.shift();
        if (raw === undefined) {
          if (done) break;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        failures = 0;
        if (raw.id !== undefined && raw.id !== "") lastId = raw.id;
        const message = JSON.parse(raw.data) as JobEventMessage<I, O>;
        if (raw.id) message.id = raw.id;
        if (message.job) withAttachments(message.job, transfer);
        yield message;
        if (opts.untilTerminal && terminalEvents.has(message.type)) return;
      }
    } finally {
      idleCancel();
      opts.signal?.removeEventListener("abort", onAbort);
      // Not awaited when leaving early (a terminal event, the caller's abort): Node's fetch can
      // leave a body read pending forever when aborted just as the response ends.
      attempt.abort();
    }
    await reading;
    if (opts.signal?.aborted || finished) return;
    // An error the server meant (a bad query, an unknown job) ends the stream; a lost connection doesn't.
    if (failure !== undefined && !isRetryable(failure) && !attempt.signal.aborted) throw failure;
    await sleep(timers, backoffDelayMs(failures++, defaultBackoff), opts.signal);
  }
}
