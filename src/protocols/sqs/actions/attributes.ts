/** GetQueueAttributes and SetQueueAttributes. */
import { defineAction, queueForUrl } from "../action.js";
import { attributesToConfigPatch, readQueueAttributes, resolveAttributeNames } from "../queue-attributes.js";
import { optionalStringList, requiredString, requiredStringMap } from "../wire-input.js";
import { xmlStringMap } from "../xml.js";

interface GetQueueAttributesResult {
  Attributes?: Record<string, string>;
}

export const getQueueAttributes = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), names: optionalStringList(input, "AttributeNames") }),
  async run(req, ctx): Promise<GetQueueAttributesResult> {
    const { names, needsStats } = resolveAttributeNames(req.names);
    const queue = await queueForUrl(ctx, req.queueUrl);
    const stats = needsStats ? await ctx.queues.queueStats(queue) : undefined;
    const attributes = readQueueAttributes(names, { queue, identity: ctx.identity, stats });
    return Object.keys(attributes).length > 0 ? { Attributes: attributes } : {};
  },
  toXml: (res) => xmlStringMap("Attribute", "Name", "Value", res.Attributes),
});

export const setQueueAttributes = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), attributes: requiredStringMap(input, "Attributes") }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const patch = attributesToConfigPatch(req.attributes, { creating: false, fifo: queue.config.fifoQueue, identity: ctx.identity });
    await ctx.queues.updateQueueConfig(queue.name, patch);
  },
});
