/**
 * POST /v1/queues/{queue}/jobs/batch: many submits in one request, each entry handled exactly as
 * a lone submit (its own idempotency key, its own outcome — one bad entry fails only itself).
 *
 * Why it exists: a job's own work on the server is small next to an HTTP request's (parse,
 * route, validate, headers, a response); an API server that submits for many callers at once
 * (the SDK gathers the submits of one event-loop turn) pays for one request instead of dozens.
 *
 * Without ?wait the answer is one JSON document, `{"results":[…]}` in entry order. With ?wait=N
 * each entry is held like a lone `submit?wait=N`, and the answer streams as NDJSON: one line per
 * entry, `{"index":i,"status":201,"job":{…}}` or `{"index":i,"status":4xx,"error":{…}}`, written
 * the moment that entry's job is terminal (or its hold ends) — a fast job is never held back by a
 * slow one in the same batch.
 */
import type { FastifyReply } from "fastify";
import type { ServerResponse } from "node:http";
import { type BatchDependency, batchSubmitOrder, fail, parseIdempotencyKey, type JobRecord, type AccountJobs, type SubmitResult, type WaitSignal, type SubmitInput } from "../../core/index.js";
import { disconnectSignal } from "./disconnect-signal.js";
import { errorAnswerOf } from "./http-errors.js";
import { checkWebhookTarget, type WebhookUrlPolicy } from "./webhooks/url-policy.js";
import { jobJson } from "./wire.js";

/** An entry as the schema admits it: its dependsOn may name other entries of the batch (`{entry: i}`). */
export type SubmitBatchEntry = Omit<SubmitInput, "dependsOn"> & { idempotencyKey?: string; dependsOn?: BatchDependency[] };

export interface SubmitBatchContext {
  jobs: AccountJobs;
  webhookPolicy: WebhookUrlPolicy;
  onUnexpectedError: (err: unknown) => void;
  /** Aborted when shutdown starts. */
  shutdownSignal: AbortSignal;
}

/** One entry's line (or array element), serialized. */
function resultJson(index: number, outcome: PromiseSettledResult<SubmitResult>, ctx: SubmitBatchContext): string {
  if (outcome.status === "fulfilled") {
    const { job, replayed } = outcome.value;
    return `{"index":${index},"status":${replayed ? 200 : 201},"job":${jobJson(job as JobRecord)}}`;
  }
  const { status, body } = errorAnswerOf(outcome.reason, ctx.onUnexpectedError);
  return `{"index":${index},"status":${status},"error":${JSON.stringify(body.error)}}`;
}

async function submitOne(ctx: SubmitBatchContext, queue: string, entry: SubmitInput & { idempotencyKey?: string }, waitSeconds: number, signal?: WaitSignal): Promise<SubmitResult> {
  const { idempotencyKey: raw, ...input } = entry;
  // The header's rules, so a key means the same job on both routes (`"k"` is k; only printable ASCII).
  const idempotencyKey = raw === undefined ? undefined : parseIdempotencyKey(raw);
  if (input.webhook) await checkWebhookTarget(input.webhook.url, ctx.webhookPolicy);
  return waitSeconds > 0 ? ctx.jobs.submitAndWait(queue, input, idempotencyKey, waitSeconds, signal) : ctx.jobs.submit(queue, input, idempotencyKey);
}

/** Whether any entry names another (a small DAG), which changes how the batch is submitted (submitGraph). */
function hasEntryRefs(entries: readonly SubmitBatchEntry[]): boolean {
  return entries.some((e) => e.dependsOn?.some((d) => typeof d !== "string"));
}

/**
 * A batch whose entries name each other: each entry is submitted once the entries it names were
 * (their job ids then stand in for the references), the others at once — parents first, as
 * batchSubmitOrder checked there is an order (a cycle or a bad reference refuses the whole batch
 * before anything is submitted). An entry whose parent entry was refused is refused too, saying so.
 */
function submitGraph(ctx: SubmitBatchContext, queue: string, entries: readonly SubmitBatchEntry[]): Array<Promise<SubmitResult>> {
  batchSubmitOrder(entries.map((e) => e.dependsOn));
  const created: Array<Promise<SubmitResult>> = [];
  const submit = (index: number): Promise<SubmitResult> => {
    const entry = entries[index]!;
    return (created[index] ??= (async () => {
      const dependsOn = await Promise.all(
        (entry.dependsOn ?? []).map(async (d) => {
          if (typeof d === "string") return d;
          const parent = await submit(d.entry).catch((err: unknown) => {
            const reason = err instanceof Error ? err.message : String(err);
            return fail("ValidationFailed", `jobs[${index}].dependsOn refers to entry ${d.entry}, which was not submitted: ${reason}`);
          });
          return parent.job.id;
        }),
      );
      return submitOne(ctx, queue, { ...entry, dependsOn: entry.dependsOn === undefined ? undefined : dependsOn }, 0);
    })());
  };
  return entries.map((_, i) => submit(i));
}

/** Answers without holding: every entry submitted, then one JSON document in entry order. */
export async function submitBatchNow(ctx: SubmitBatchContext, queue: string, entries: SubmitBatchEntry[]): Promise<string> {
  const submits = hasEntryRefs(entries) ? submitGraph(ctx, queue, entries) : entries.map((e) => submitOne(ctx, queue, e as SubmitInput, 0));
  const outcomes = await Promise.allSettled(submits);
  return `{"results":[${outcomes.map((o, i) => resultJson(i, o, ctx)).join(",")}]}`;
}

/** Answers as NDJSON, a line per entry as soon as it is settled; the response ends with the last. */
export async function submitBatchStreaming(ctx: SubmitBatchContext, reply: FastifyReply, queue: string, entries: SubmitBatchEntry[], waitSeconds: number): Promise<void> {
  // Checked before the stream starts: a cycle or a bad reference refuses the whole batch (400).
  const graph = hasEntryRefs(entries) ? submitGraph(ctx, queue, entries) : undefined;
  // The client going away ends every entry's hold.
  const signal = disconnectSignal(reply);
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
  const out = new LinesByTurn(res);
  await Promise.all(
    entries.map(async (entry, index) => {
      // In a graph each entry is created in its turn, then held as a lone submit?wait would be.
      const held = graph
        ? graph[index]!.then(async (r) => ({ job: await ctx.jobs.wait(r.job.id, waitSeconds, signal), replayed: r.replayed }))
        : submitOne(ctx, queue, entry as SubmitInput, waitSeconds, signal);
      const [outcome] = await Promise.allSettled([held]);
      out.write(`${resultJson(index, outcome!, ctx)}\n`);
    }),
  );
  // The head went out before shutdown began, promising keep-alive; a connection left open now
  // would hold server.close() until the grace period cuts it (fastify's onSend hook, which says
  // `connection: close` on the other routes' answers during shutdown, never sees this one).
  out.end(ctx.shutdownSignal.aborted);
}

/**
 * Lines settled in one turn (a group commit completes many jobs at once) leave as one chunk,
 * written when the turn's microtasks are done: one write here and one read for the client,
 * where a chunk per line cost the SDK a read, a decode and a buffer copy each.
 */
class LinesByTurn {
  /** Lines settled in this turn, not yet written. */
  private pending: string[] = [];
  constructor(private readonly res: ServerResponse) {}

  write(line: string): void {
    if (this.res.destroyed) return;
    if (this.pending.length === 0) process.nextTick(() => this.flush());
    this.pending.push(line);
  }

  private flush(): void {
    const lines = this.pending;
    this.pending = [];
    if (!this.res.destroyed && lines.length > 0) this.res.write(lines.join(""));
  }

  end(closeConnection: boolean): void {
    this.flush();
    if (this.res.destroyed) return;
    const socket = this.res.socket;
    this.res.end(closeConnection && socket ? () => socket.end() : undefined);
  }
}
