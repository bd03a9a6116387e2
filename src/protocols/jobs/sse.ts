/**
 * Server-Sent Events: a job's lifecycle (/v1/jobs/{id}/events) or every job's (/v1/events), read
 * from the durable event log through core's feed (event-feed.ts). Each event's `id:` is its
 * durable id, so a client that reconnects with Last-Event-ID — after a dropped connection or a
 * server restart — gets every later event once. A comment line every 15 s keeps proxies from
 * closing an idle stream; shutdown ends every stream.
 */
import type { ServerResponse } from "node:http";
import { type Clock, type TimerHandle, type JobService, type JobEvent, type JobRecord, type LoggedJobEvent, isTerminal } from "../../core/index.js";
import { eventJson } from "./wire.js";

export const keepaliveIntervalMs = 15_000;

export interface SseDeps {
  jobs: JobService;
  clock: Clock;
  shutdownSignal: AbortSignal;
}

export function sseHeaders(): Record<string, string> {
  return {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    // nginx buffers responses unless told not to; events must arrive as they happen.
    "x-accel-buffering": "no",
  };
}

/** What a stream may hold unsent before its subscriber is cut off (see send). */
export const sseMaxBufferedBytes = 8 * 1024 * 1024;

/** A frame; without `id` (a snapshot) the client's Last-Event-ID stays what it was. */
function frame(event: JobEvent, id: number | undefined): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event.type}\n${dataLines(eventJson(event))}\n`;
}

/**
 * One `data:` line per line of the JSON: a job adopted from an SQS message keeps that body's text
 * as its input, line breaks included, and a bare line break would end the field (a blank line, the
 * event). Clients join the lines with "\n", which is the whitespace it was.
 */
function dataLines(json: string): string {
  if (!json.includes("\n") && !json.includes("\r")) return `data: ${json}\n`;
  return `${json
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join("\n")}\n`;
}

export interface StreamSpec {
  /** Only this account's events ("" is the server's own). */
  account: string;
  queueName?: string;
  jobId?: string;
  /** Resume after this event id (Last-Event-ID, or ?since=); undefined: from now on. */
  afterId?: number;
  /** A job stream without a position to resume from: the job's current state first. */
  snapshot?: () => Promise<JobRecord>;
}

/**
 * Streams the events `spec` asks for into `res` (headers already written), in id order, each once.
 * A job's stream ends after its terminal event (at once if it is already terminal and nothing is
 * left to send), or when the job is deleted with its queue. A position older than the log keeps
 * gets a `truncated` event first: the events between are gone (retention).
 */
export async function streamEvents(deps: SseDeps, res: ServerResponse, spec: StreamSpec): Promise<void> {
  const { feed } = deps.jobs;
  let ended = false;
  let keepalive: TimerHandle | undefined;
  let subscription: { close(): void } | undefined;
  let goneUnsubscribe: (() => void) | undefined;
  // A job stream with a snapshot holds events back until the snapshot is out.
  let held: LoggedJobEvent[] | undefined = spec.snapshot ? [] : undefined;
  const end = (): void => {
    if (ended) return;
    ended = true;
    subscription?.close();
    goneUnsubscribe?.();
    keepalive?.cancel();
    deps.shutdownSignal.removeEventListener("abort", end);
    res.end();
  };
  const write = (text: string): void => {
    if (ended) return;
    res.write(text);
    // A subscriber that doesn't read (or reads slower than a busy queue's events come) would
    // otherwise grow this response's buffer without bound: it is cut off, and may reconnect.
    if (res.writableLength > sseMaxBufferedBytes) {
      end();
      res.destroy();
    }
  };
  const send = (e: LoggedJobEvent): void => {
    if (held) return void held.push(e);
    write(frame({ type: e.type, atMs: e.atMs, job: e.job, output: e.output }, e.id));
    if (spec.jobId !== undefined && isTerminal(e.job.status)) end();
  };
  res.on("close", end);
  deps.shutdownSignal.addEventListener("abort", end, { once: true });
  if (deps.shutdownSignal.aborted) return end();
  const beat = (): void => {
    if (ended) return;
    write(": keepalive\n\n");
    // Another node's events reach this one through the notifier; should a notice be lost (or the
    // store's notifier reach only this process), the feed reads the log at least this often.
    feed.poke();
    keepalive = deps.clock.setTimer(keepaliveIntervalMs, beat);
  };
  keepalive = deps.clock.setTimer(keepaliveIntervalMs, beat);
  // A job deleted with its queue (SQS DeleteQueue) has no terminal event to end its stream on.
  if (spec.jobId !== undefined) goneUnsubscribe = deps.jobs.events.watchGone(spec.jobId, end);
  try {
    let afterId = spec.afterId;
    if (afterId === undefined) afterId = await feed.latestId();
    else {
      const floorId = await feed.prunedThroughId();
      if (afterId < floorId) write(`event: truncated\ndata: ${JSON.stringify({ type: "truncated", afterId, prunedThroughId: floorId })}\n\n`);
    }
    if (ended) return;
    const sub = feed.subscribe({ account: spec.account, queueName: spec.queueName, jobId: spec.jobId }, afterId, send);
    subscription = sub;
    if (ended) return sub.close();
    if (!spec.snapshot) {
      write(": connected\n\n");
      await sub.live;
    } else {
      const job = await spec.snapshot();
      const pending = held ?? [];
      held = undefined;
      write(frame({ type: "job.snapshot", atMs: deps.clock.nowMs(), job }, undefined));
      for (const e of pending) send(e);
      await sub.live;
      if (isTerminal(job.status)) end();
    }
    // A resumed job stream whose terminal event came before its position: nothing more will come.
    if (spec.jobId !== undefined && !ended && !spec.snapshot && isTerminal((await deps.jobs.get(spec.account, spec.jobId)).status)) end();
  } catch {
    end(); // the job was pruned meanwhile, or the log could not be read: the client reconnects
  }
}
