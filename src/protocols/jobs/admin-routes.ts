/**
 * The admin routes' handlers (admin-route-specs.ts): queues listed with their stats, peeked, sent
 * to, purged and reconfigured; dead-letter queues redriven; finished jobs retried. The dashboard
 * and the `sluice` CLI use nothing else.
 */
import { type AccountJobs, type AccountQueues, type QueueConfig, SluiceError, fail, limits, listDeadLetterSourceQueues } from "../../core/index.js";
import { peekedMessageWire, messageAttributesOf, redriveTaskWire, sentMessageWire, type WireAttributeValue } from "./admin-wire.js";
import { type Handler, type JobsRoutesOptions, type Request, sendJson } from "./route-handler.js";
import { sseHeaders } from "./sse.js";
import { type StatsEvent, streamStats } from "./stats-stream.js";
import { jobJson, queueWire } from "./wire.js";

interface SendBody {
  body: string;
  messageAttributes?: Record<string, WireAttributeValue>;
  delaySeconds?: number;
  priority?: number;
  messageGroupId?: string;
  messageDeduplicationId?: string;
}

interface AttributesBody {
  visibilityTimeoutSeconds?: number;
  delaySeconds?: number;
  messageRetentionPeriodSeconds?: number;
  maximumMessageSizeBytes?: number;
  receiveMessageWaitTimeSeconds?: number;
  redrivePolicy?: { deadLetterQueue: string; maxReceiveCount: number } | null;
  contentBasedDeduplication?: boolean;
  defaultPriority?: number;
}

interface PageQuery {
  prefix?: string;
  limit?: number;
  cursor?: string;
}

/** Redrives a queue page shows (SQS's ListMessageMoveTasks maximum). */
const redrivesShown = limits.listMoveTasksMaxResults;
const deadLetterSourcesShown = 10;
const queueNamePattern = /^[A-Za-z0-9_-]+(\.fifo)?$/;

/** A page cursor is the last name of the page, base64url'd: opaque to clients, checked on the way back. */
function encodeCursor(name: string): string {
  return Buffer.from(name, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): string {
  const name = Buffer.from(cursor, "base64url").toString("utf8");
  if (!queueNamePattern.test(name) || encodeCursor(name) !== cursor) fail("ValidationFailed", "querystring.cursor is not a cursor this API returned.");
  return name;
}

/** An SQS code the admin API answers with one of its own (409s where the SQS API says UnsupportedOperation). */
async function translating<T>(run: Promise<T>, from: string, to: (err: SluiceError) => never): Promise<T> {
  try {
    return await run;
  } catch (err) {
    if (err instanceof SluiceError && err.code === from) to(err);
    throw err;
  }
}

/** What an admin request works on: its token's account's queues and jobs, and the ARNs that name them (peeked messages' sources). */
interface AccountView {
  jobs: AccountJobs;
  queues: AccountQueues;
  arnOf(name: string): string;
}

export function adminHandlers(o: JobsRoutesOptions): Record<string, Handler> {
  const statsDeps = { clock: o.clock, shutdownSignal: o.shutdownSignal, onUnexpectedError: o.onUnexpectedError };
  const viewOf = (request: Request): AccountView => {
    const account = request.storeAccount;
    const accountId = account === "" ? o.accountId : account;
    return { jobs: o.jobs.forAccount(account), queues: o.queues.forAccount(account), arnOf: (name) => `arn:aws:sqs:${o.region}:${accountId}:${name}` };
  };

  async function queuePageJson({ jobs }: AccountView, q: PageQuery): Promise<string> {
    const afterName = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const page = await jobs.listQueueInfos({ prefix: q.prefix, limit: q.limit, afterName });
    const last = page.queues[page.queues.length - 1];
    return `"queues":${JSON.stringify(page.queues.map((info) => queueWire(info, o.workersAdvice?.(info))))},"nextCursor":${JSON.stringify(page.hasMore && last ? encodeCursor(last.name) : null)}`;
  }

  /** The admin API's attribute names as core's config fields; `where` names the body part in errors. */
  function configPatchOf(body: AttributesBody, fifo: boolean, where: string): Partial<QueueConfig> {
    if (body.contentBasedDeduplication !== undefined && !fifo) fail("ValidationFailed", `${where}.contentBasedDeduplication applies to FIFO queues only.`);
    const { redrivePolicy, ...rest } = body;
    const patch: Partial<QueueConfig> = { ...rest };
    if (redrivePolicy === null) patch.redrivePolicy = undefined;
    else if (redrivePolicy) patch.redrivePolicy = { deadLetterQueueName: redrivePolicy.deadLetterQueue, maxReceiveCount: redrivePolicy.maxReceiveCount };
    return patch;
  }

  async function queueJson({ jobs }: AccountView, name: string): Promise<string> {
    const info = await jobs.queueInfo(name);
    return JSON.stringify(queueWire(info, o.workersAdvice?.(info)));
  }

  async function redrivesJson({ queues }: AccountView, name: string): Promise<string> {
    return JSON.stringify((await queues.moveTasks.list(name, redrivesShown)).map(redriveTaskWire));
  }

  /** The queues that dead-letter into `name` (a few names): the dashboard offers a redrive only on such a queue. */
  async function deadLetterSourcesJson({ queues }: AccountView, name: string): Promise<string> {
    return JSON.stringify((await listDeadLetterSourceQueues(queues, name, { maxResults: deadLetterSourcesShown })).queues.map((queue) => queue.name));
  }

  const intervalMsOf = (query: Record<string, unknown>): number => ((query.intervalSeconds as number | undefined) ?? limits.admin.statsIntervalDefaultSeconds) * 1000;

  return {
    async listQueues(request, reply) {
      return sendJson(reply, 200, `{${await queuePageJson(viewOf(request), request.query as PageQuery)}}`);
    },

    async streamQueues(request, reply) {
      const q = request.query as PageQuery;
      const view = viewOf(request);
      if (q.cursor !== undefined) decodeCursor(q.cursor); // a bad cursor is a 400, before the stream starts
      reply.hijack();
      reply.raw.writeHead(200, sseHeaders());
      streamStats(statsDeps, reply.raw, intervalMsOf(request.query), async () => ({ event: "queues", json: `{"at":${JSON.stringify(new Date(o.clock.nowMs()).toISOString())},${await queuePageJson(view, q)}}` }));
    },

    async streamQueue(request, reply) {
      const name = request.params.queue!;
      const view = viewOf(request);
      await view.queues.getQueue(name); // a missing queue is a plain 404, before the stream starts
      reply.hijack();
      reply.raw.writeHead(200, sseHeaders());
      streamStats(statsDeps, reply.raw, intervalMsOf(request.query), async (): Promise<StatsEvent> => {
        const at = JSON.stringify(new Date(o.clock.nowMs()).toISOString());
        try {
          return { event: "queue", json: `{"at":${at},"queue":${await queueJson(view, name)},"redrives":${await redrivesJson(view, name)},"deadLetterSources":${await deadLetterSourcesJson(view, name)}}` };
        } catch (err) {
          if (!(err instanceof SluiceError && (err.code === "QueueNotFound" || err.code === "ResourceNotFound"))) throw err;
          return { event: "gone", json: `{"at":${at},"queue":${JSON.stringify(name)}}`, end: true };
        }
      });
    },

    async peekMessages(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const name = request.params.queue!;
      const queue = await queues.getQueue(name);
      const messages = await queues.peekMessages(name, request.query.limit as number | undefined);
      return sendJson(reply, 200, JSON.stringify({ messages: messages.map((m) => peekedMessageWire(m, queue.config.fifoQueue, view.arnOf)) }));
    },

    async sendMessage(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const body = request.body as SendBody;
      const queue = await queues.getQueue(request.params.queue!);
      const sent = await queues.sendMessage(queue, {
        body: body.body,
        attributes: messageAttributesOf(body.messageAttributes),
        delaySeconds: body.delaySeconds,
        priority: body.priority,
        groupId: body.messageGroupId,
        deduplicationId: body.messageDeduplicationId,
      });
      return sendJson(reply, 201, JSON.stringify({ message: sentMessageWire(sent) }));
    },

    async purgeQueue(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      return sendJson(reply, 200, JSON.stringify({ deleted: await queues.purgeQueue(request.params.queue!) }));
    },

    async createQueue(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const body = request.body as { name: string; attributes?: AttributesBody };
      const fifoQueue = body.name.endsWith(".fifo");
      const config = { ...configPatchOf(body.attributes ?? {}, fifoQueue, "body.attributes"), fifoQueue };
      const { created } = await queues.createQueue({ name: body.name, config });
      return sendJson(reply, created ? 201 : 200, `{"queue":${await queueJson(view, body.name)}}`);
    },

    async deleteQueue(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const name = request.params.queue!;
      await queues.deleteQueue(name);
      return sendJson(reply, 200, JSON.stringify({ deleted: name }));
    },

    async updateQueueAttributes(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const name = request.params.queue!;
      const body = request.body as AttributesBody;
      const queue = await queues.getQueue(name);
      const patch = configPatchOf(body, queue.config.fifoQueue, "body");
      // Its notice drops the cached record and job policy (dead-letter target): the read below sees the change.
      await queues.updateQueueConfig(name, patch);
      return sendJson(reply, 200, `{"queue":${await queueJson(view, name)}}`);
    },

    async startRedrive(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const name = request.params.queue!;
      const body = request.body as { destination?: string; maxPerSecond?: number };
      await queues.getQueue(name);
      if (body.destination !== undefined) {
        await translating(queues.getQueue(body.destination), "QueueNotFound", () => fail("QueueNotFound", `The destination queue ${body.destination} does not exist.`));
      }
      const started = queues.moveTasks.start({ sourceQueueName: name, destinationQueueName: body.destination, maxMessagesPerSecond: body.maxPerSecond });
      const task = await translating(started, "RedriveInProgress", () =>
        fail("RedriveInProgress", `A redrive of ${name} is already running: wait for it to finish, or cancel it (POST /v1/redrives/{taskHandle}/cancel).`),
      );
      return sendJson(reply, 201, JSON.stringify({ task: redriveTaskWire(task) }));
    },

    async listRedrives(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const name = request.params.queue!;
      await queues.getQueue(name);
      return sendJson(reply, 200, `{"tasks":${await redrivesJson(view, name)}}`);
    },

    async cancelRedrive(request, reply) {
      const view = viewOf(request);
      const { queues } = view;
      const handle = request.params.taskHandle!;
      const noSuchRedrive = (): never => fail("ResourceNotFound", `No redrive has taskHandle ${handle}.`);
      // A handle that can't be one (SQS's answer: InvalidParameterValue) names no redrive either.
      const cancelled = translating(translating(queues.moveTasks.cancel(handle), "ResourceNotFound", noSuchRedrive), "InvalidParameterValue", noSuchRedrive);
      const task = await translating(cancelled, "UnsupportedOperation", (err) => fail("RedriveAlreadyFinished", err.message));
      return sendJson(reply, 200, JSON.stringify({ task: redriveTaskWire(task) }));
    },

    async retryJob(request, reply) {
      return sendJson(reply, 200, `{"job":${jobJson(await viewOf(request).jobs.retry(request.params.id!))}}`);
    },
  };
}
