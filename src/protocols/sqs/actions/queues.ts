/** Queue lifecycle: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, PurgeQueue. */
import { SluiceError, fail } from "../../../core/index.js";
import { type ActionContext, defineAction, queueForUrl, urlOfQueue } from "../action.js";
import { attributesToConfigPatch, queueExistsOtherwise } from "../queue-attributes.js";
import { checkTags } from "../tag-rules.js";
import { optionalInteger, optionalString, optionalStringMap, requiredString } from "../wire-input.js";
import { xmlElement } from "../xml.js";

interface QueueUrlResult {
  QueueUrl: string;
}

const queueUrlXml = (res: QueueUrlResult): string => xmlElement("QueueUrl", res.QueueUrl);

function checkedTags(tags: Record<string, string> | undefined): Record<string, string> | undefined {
  if (tags) checkTags(tags);
  return tags;
}

export const createQueue = defineAction({
  decode: (input) => ({
    queueName: requiredString(input, "QueueName"),
    attributes: optionalStringMap(input, "Attributes"),
    // The model spells this member `tags`; accept `Tags` from hand-written clients too.
    tags: checkedTags(optionalStringMap(input, "tags") ?? optionalStringMap(input, "Tags")),
  }),
  async run(req, ctx): Promise<QueueUrlResult> {
    const attributes = req.attributes ?? {};
    const fifo = attributes.FifoQueue?.toLowerCase() === "true";
    const patch = attributesToConfigPatch(attributes, { creating: true, fifo, identity: ctx.identity });
    const hasAttributes = Object.keys(attributes).length > 0;
    const config = hasAttributes ? patch : undefined;
    const { queue } = await ctx.queues.createQueue({ name: req.queueName, config, tags: req.tags }).catch(async (err: unknown) => {
      // Core names the differing config fields; SQS names the attributes.
      if (err instanceof SluiceError && err.code === "QueueAlreadyExists" && config) queueExistsOtherwise((await ctx.queues.getQueue(req.queueName)).config, config);
      throw err;
    });
    return { QueueUrl: urlOfQueue(ctx, queue.name) };
  },
  toXml: queueUrlXml,
});

export const getQueueUrl = defineAction({
  decode: (input) => ({ queueName: requiredString(input, "QueueName"), ownerAccountId: optionalString(input, "QueueOwnerAWSAccountId") }),
  async run(req, ctx): Promise<QueueUrlResult> {
    if (req.ownerAccountId !== undefined && req.ownerAccountId !== ctx.identity.accountId) {
      fail("QueueNotFound", "The specified queue does not exist.");
    }
    const queue = await ctx.queues.getQueue(req.queueName);
    return { QueueUrl: urlOfQueue(ctx, queue.name) };
  },
  toXml: queueUrlXml,
});

/** NextToken is the last name returned, opaque to clients. */
function encodeNextToken(lastName: string): string {
  return Buffer.from(`q:${lastName}`, "utf8").toString("base64url");
}

function decodeNextToken(token: string): string {
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith("q:")) fail("InvalidParameterValue", "Invalid NextToken value.");
  return text.slice(2);
}

interface ListQueuesResult {
  QueueUrls?: string[];
  NextToken?: string;
}

export const listQueues = defineAction({
  decode: (input) => ({
    prefix: optionalString(input, "QueueNamePrefix"),
    maxResults: optionalInteger(input, "MaxResults"),
    nextToken: optionalString(input, "NextToken"),
  }),
  async run(req, ctx): Promise<ListQueuesResult> {
    const afterName = req.nextToken ? decodeNextToken(req.nextToken) : undefined;
    const { queues, hasMore } = await ctx.queues.listQueues({ prefix: req.prefix || undefined, maxResults: req.maxResults, afterName });
    const result: ListQueuesResult = {};
    if (queues.length > 0) result.QueueUrls = queues.map((q) => urlOfQueue(ctx, q.name));
    // SQS pages only when the caller asked for pages.
    if (req.maxResults !== undefined && hasMore) result.NextToken = encodeNextToken(queues[queues.length - 1]!.name);
    return result;
  },
  toXml: (res) => (res.QueueUrls ?? []).map((url) => xmlElement("QueueUrl", url)).join("") + xmlElement("NextToken", res.NextToken),
});

function queueUrlOnly(run: (name: string, ctx: ActionContext) => Promise<void>) {
  return defineAction({
    decode: (input) => requiredString(input, "QueueUrl"),
    async run(url, ctx): Promise<void> {
      const queue = await queueForUrl(ctx, url);
      await run(queue.name, ctx);
    },
  });
}

export const deleteQueue = queueUrlOnly((name, ctx) => ctx.queues.deleteQueue(name));
export const purgeQueue = queueUrlOnly(async (name, ctx) => {
  await ctx.queues.purgeQueue(name);
});
