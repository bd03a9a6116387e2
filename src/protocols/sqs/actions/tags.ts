/** TagQueue, UntagQueue, ListQueueTags. */
import { defineAction, queueForUrl } from "../action.js";
import { decodeTagKeys, decodeTags } from "../tag-rules.js";
import { requiredString } from "../wire-input.js";
import { xmlStringMap } from "../xml.js";

export const tagQueue = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), tags: decodeTags(input) }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    await ctx.queues.tagQueue(queue.name, req.tags);
  },
});

export const untagQueue = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), keys: decodeTagKeys(input) }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    await ctx.queues.untagQueue(queue.name, req.keys);
  },
});

interface ListQueueTagsResult {
  Tags?: Record<string, string>;
}

export const listQueueTags = defineAction({
  decode: (input) => requiredString(input, "QueueUrl"),
  async run(url, ctx): Promise<ListQueueTagsResult> {
    const queue = await queueForUrl(ctx, url);
    return Object.keys(queue.tags).length > 0 ? { Tags: queue.tags } : {};
  },
  toXml: (res) => xmlStringMap("Tag", "Key", "Value", res.Tags),
});
