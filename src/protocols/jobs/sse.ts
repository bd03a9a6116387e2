/**
 * Server-Sent Events: a job's lifecycle (/v1/jobs/{id}/events) or every job's (/v1/events).
 * Events come from core's in-process hub as transitions commit; nothing polls. A comment line every
 * 15 s keeps proxies from closing an idle stream; shutdown ends every stream.
 */
import type { ServerResponse } from "node:http";
import { type Clock, type TimerHandle, type JobEventFilter, type JobService, type JobEvent, type JobRecord, isTerminal } from "../../core/index.js";
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

function frame(event: JobEvent, id: number): string {
  return `id: ${id}\nevent: ${event.type}\n${dataLines(eventJson(event))}\n`;
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

/** The event after which a job's stream ends: a terminal event, or a snapshot of a finished job. */
function endsStream(event: JobEvent): boolean {
  // By the event's type, not its record's status: a record read for another node's notice can be
  // newer than the event (job.started with the job already succeeded), and job.succeeded follows.
  if (event.type === "job.snapshot") return isTerminal(event.job.status);
  return event.type === "job.succeeded" || event.type === "job.failed" || event.type === "job.canceled";
}

/**
 * Streams events matching `filter` into `res` (headers already written). With `snapshot` (a job
 * stream), subscribes first, then reads and sends the job's current state as `job.snapshot`, then
 * what happened meanwhile — so nothing between the read and the subscription is missed — and ends
 * after the job's terminal event, or when the job is deleted with its queue.
 */
export async function streamEvents(deps: SseDeps, res: ServerResponse, filter: JobEventFilter, snapshot?: () => Promise<JobRecord>): Promise<void> {
  let ended = false;
  let keepalive: TimerHandle | undefined;
  let buffered: Array<[JobEvent, number]> | undefined = snapshot ? [] : undefined;
  const end = (): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    keepalive?.cancel();
    deps.shutdownSignal.removeEventListener("abort", end);
    res.end();
  };
  const destroy = (): void => {
    end();
    res.destroy();
  };
  const send = (event: JobEvent, id: number): void => {
    if (ended) return;
    if (buffered) {
      buffered.push([event, id]);
      return;
    }
    res.write(frame(event, id));
    // A subscriber that doesn't read (or reads slower than a busy queue's events come) would
    // otherwise grow this response's buffer without bound: it is cut off, and may reconnect.
    if (res.writableLength > sseMaxBufferedBytes) return destroy();
    if (filter.jobId !== undefined && endsStream(event)) end();
  };
  // A job deleted with its queue (SQS DeleteQueue) has no terminal event to end its stream on.
  const unsubscribe = deps.jobs.events.subscribe(filter, send, end);
  res.on("close", end);
  deps.shutdownSignal.addEventListener("abort", end, { once: true });
  const beat = (): void => {
    if (ended) return;
    res.write(": keepalive\n\n");
    keepalive = deps.clock.setTimer(keepaliveIntervalMs, beat);
  };
  keepalive = deps.clock.setTimer(keepaliveIntervalMs, beat);
  if (deps.shutdownSignal.aborted) return end();
  if (!snapshot) {
    res.write(": connected\n\n");
    return;
  }
  try {
    const job = await snapshot();
    const pending = buffered ?? [];
    buffered = undefined;
    send({ type: "job.snapshot", atMs: deps.clock.nowMs(), job }, deps.jobs.events.lastEventId);
    for (const [event, id] of pending) send(event, id);
  } catch {
    end(); // the job was pruned between the route's read and this one
  }
}
