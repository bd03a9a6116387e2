/**
 * AddPermission / RemovePermission: they edit the queue's Policy document (IAM JSON), one
 * statement per label, as SQS does. What the policy then lets another account do is
 * queue-policy.ts's to decide.
 */
import { type QueueConfig, type QueueRecord, fail, limits } from "../../core/index.js";

/** The actions SQS lets AddPermission grant (cross-account permissions exist only for these). */
const grantableActions = new Set([
  "*",
  "SendMessage",
  "ReceiveMessage",
  "DeleteMessage",
  "ChangeMessageVisibility",
  "GetQueueAttributes",
  "GetQueueUrl",
  "ListDeadLetterSourceQueues",
  "PurgeQueue",
]);

const labelPattern = /^[A-Za-z0-9_-]+$/;
const accountIdPattern = /^\d{12}$/;

interface PolicyStatement {
  Sid?: string;
  [key: string]: unknown;
}

interface PolicyDocument {
  Version?: string;
  Id?: string;
  Statement: PolicyStatement[];
  [key: string]: unknown;
}

export interface PermissionQueues {
  getQueue(name: string): Promise<QueueRecord>;
  updateQueueConfig(name: string, patch: Partial<QueueConfig>): Promise<QueueRecord>;
}

export interface AddPermissionInput {
  label: string;
  accountIds: string[];
  actions: string[];
  /** The queue's ARN, the statements' Resource. */
  queueArn: string;
}

function invalid(name: string, value: string, reason: string): never {
  fail("InvalidParameterValue", `Value ${value} for parameter ${name} is invalid. Reason: ${reason}`);
}

function parsePolicy(policy: string | undefined, queueArn: string): PolicyDocument {
  // The version SQS itself writes into the policy AddPermission creates.
  if (policy === undefined) return { Version: "2008-10-17", Id: `${queueArn}/SQSDefaultPolicy`, Statement: [] };
  const parsed = JSON.parse(policy) as Record<string, unknown>;
  const statement = parsed.Statement;
  const statements = Array.isArray(statement) ? (statement as PolicyStatement[]) : statement ? [statement as PolicyStatement] : [];
  return { ...parsed, Statement: statements };
}

/** IAM allows a single value or a list; SQS writes a single value as a plain string. */
function oneOrMany(values: string[]): string | string[] {
  return values.length === 1 ? values[0]! : values;
}

export function validatePermission(input: AddPermissionInput): void {
  const { label, accountIds, actions } = input;
  if (label.length < 1 || label.length > limits.permissionLabelMaxLength || !labelPattern.test(label)) {
    invalid("Label", label, `Can only include alphanumeric characters, hyphens, or underscores. 1 to ${limits.permissionLabelMaxLength} in length.`);
  }
  if (accountIds.length === 0) fail("MissingParameter", "The request must contain the parameter AWSAccountIds.");
  if (actions.length === 0) fail("MissingParameter", "The request must contain the parameter Actions.");
  if (accountIds.length > limits.permissionAccountsMax) invalid("AWSAccountIds", accountIds.join(","), `At most ${limits.permissionAccountsMax} accounts.`);
  if (actions.length > limits.permissionActionsMax) invalid("Actions", actions.join(","), `At most ${limits.permissionActionsMax} actions.`);
  for (const id of accountIds) if (!accountIdPattern.test(id)) invalid("AWSAccountIds", id, "An AWS account id is 12 digits.");
  for (const action of actions) if (!grantableActions.has(action)) invalid("ActionName", action, "Not a queue action that can be shared.");
}

export async function addPermission(queues: PermissionQueues, name: string, input: AddPermissionInput): Promise<void> {
  validatePermission(input);
  const queue = await queues.getQueue(name);
  const doc = parsePolicy(queue.config.policy, input.queueArn);
  if (doc.Statement.some((s) => s.Sid === input.label)) invalid("Label", input.label, "Already exists.");
  if (doc.Statement.length >= limits.permissionStatementsMax) {
    fail("OverLimit", `The queue's policy already has ${limits.permissionStatementsMax} statements, the most a queue policy may have.`);
  }
  doc.Statement.push({
    Sid: input.label,
    Effect: "Allow",
    Principal: { AWS: oneOrMany(input.accountIds.map((id) => `arn:aws:iam::${id}:root`)) },
    Action: oneOrMany(input.actions.map((a) => `SQS:${a}`)),
    Resource: input.queueArn,
  });
  const policy = JSON.stringify(doc);
  if (Buffer.byteLength(policy, "utf8") > limits.policyMaxBytes) {
    fail("OverLimit", `With this permission the queue's policy would be larger than ${limits.policyMaxBytes} bytes, the most a queue policy may have.`);
  }
  await queues.updateQueueConfig(name, { policy });
}

export async function removePermission(queues: PermissionQueues, name: string, label: string): Promise<void> {
  const queue = await queues.getQueue(name);
  const doc = parsePolicy(queue.config.policy, "");
  const remaining = doc.Statement.filter((s) => s.Sid !== label);
  if (remaining.length === doc.Statement.length) invalid("Label", label, "can't find label.");
  // With no statement left the queue has no policy, as after SetQueueAttributes Policy="".
  await queues.updateQueueConfig(name, { policy: remaining.length === 0 ? undefined : JSON.stringify({ ...doc, Statement: remaining }) });
}
