/** GetQueueAttributes and SetQueueAttributes. */
import { SluiceError, fail } from "../../../core/errors.js";
import type { QueueConfig } from "../../../core/queue.js";
import { type ActionContext, defineAction, queueForUrl } from "../action.js";
import { attributesToConfigPatch, readQueueAttributes, resolveAttributeNames } from "../queue-attributes.js";
import { queueNameFromArn } from "../queue-url.js";
import { optionalStringList, optionalStringMap, requiredString } from "../wire-input.js";
import { xmlStringMap } from "../xml.js";

/** A redrive policy must name an existing queue, as SQS checks when the policy is set. */
export async function checkDeadLetterTarget(ctx: ActionContext, patch: Partial<QueueConfig>): Promise<void> {
  const arn = patch.redrivePolicy?.deadLetterTargetArn;
  if (arn === undefined) return;
  const name = queueNameFromArn(ctx.identity, arn)!;
  try {
    await ctx.queues.getQueue(name);
  } catch (err) {
    if (err instanceof SluiceError && err.code === "QueueNotFound") {
      fail("InvalidAttributeValue", `Value ${JSON.stringify(patch.redrivePolicy)} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.`);
    }
    throw err;
  }
}

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
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), attributes: optionalStringMap(input, "Attributes") ?? {} }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const patch = attributesToConfigPatch(req.attributes, { creating: false, fifo: queue.config.fifoQueue, identity: ctx.identity });
    await checkDeadLetterTarget(ctx, patch);
    await ctx.queues.updateQueueConfig(queue.name, patch);
  },
});
