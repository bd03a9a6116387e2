/**
 * AddPermission and RemovePermission: they maintain the queue's Policy document (one statement per
 * label, permission-statements.ts); queue-policy.ts enforces it for other accounts.
 */
import { defineAction, queueForUrl } from "../action.js";
import { addPermission as addToPolicy, removePermission as removeFromPolicy } from "../permission-statements.js";
import { queueArn } from "../queue-url.js";
import { optionalStringList, requiredString } from "../wire-input.js";

export const addPermission = defineAction({
  decode: (input) => ({
    queueUrl: requiredString(input, "QueueUrl"),
    label: requiredString(input, "Label"),
    accountIds: optionalStringList(input, "AWSAccountIds") ?? [],
    actions: optionalStringList(input, "Actions") ?? [],
  }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    await addToPolicy(ctx.queues, queue.name, { label: req.label, accountIds: req.accountIds, actions: req.actions, queueArn: queueArn(ctx.identity, queue.name) });
  },
});

export const removePermission = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), label: requiredString(input, "Label") }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    await removeFromPolicy(ctx.queues, queue.name, req.label);
  },
});
