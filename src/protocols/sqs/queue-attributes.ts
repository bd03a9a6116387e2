/**
 * SQS queue attribute names ↔ core QueueConfig, in one table: how each attribute is read, whether
 * and how it can be written, and which queues have it. Range checks live in core
 * (validateQueueConfig); this file checks names and value syntax.
 */
import { jsonTooDeep, maxJsonDepth } from "../http/json-depth.js";
import { differingConfigKeys, fail, limits, type QueueConfig, type QueueRecord, type RedriveAllowPolicy, type RedrivePolicy, type QueueStats } from "../../core/index.js";
import { type SqsIdentity, queueArn, queueNameFromArn } from "./queue-url.js";
import { attributeOfConfigKey, redrivePolicyJson } from "./sqs-wording.js";

type ConfigPatch = Partial<QueueConfig>;

interface ReadContext {
  queue: QueueRecord;
  identity: SqsIdentity;
  stats: QueueStats | undefined;
}

interface AttributeSpec {
  read(ctx: ReadContext): string | undefined;
  /** Absent for read-only attributes (setting one is InvalidAttributeName, as in SQS). */
  write?(value: string, patch: ConfigPatch, identity: SqsIdentity): void;
  /** Only FIFO queues have it; `fifoOnlyMessage` is how SQS refuses it on a standard queue, if not as unknown. */
  fifoOnly?: boolean;
  fifoOnlyMessage?: string;
  /** Can be given to CreateQueue but never changed (only FifoQueue: checkUnchangedQueueType). */
  createOnly?: boolean;
  needsStats?: boolean;
  /** Sluice extensions are returned only when asked for by name, so `All` stays stock. */
  extension?: boolean;
}

function invalidValue(name: string, value: string, reason?: string): never {
  fail("InvalidAttributeValue", `Invalid value for the parameter ${name}${reason ? `. Reason: ${reason}` : ""}: ${value.slice(0, 200)}`);
}

function parseInteger(name: string, value: string): number {
  if (!/^\s*\d{1,10}\s*$/.test(value)) invalidValue(name, value, "must be an integer");
  return Number(value);
}

function parseBoolean(name: string, value: string): boolean {
  const lower = value.toLowerCase();
  if (lower !== "true" && lower !== "false") invalidValue(name, value, "must be true or false");
  return lower === "true";
}

function parseJsonObject(name: string, value: string): Record<string, unknown> {
  if (jsonTooDeep(value)) invalidValue(name, value.slice(0, 100), `nests JSON deeper than ${maxJsonDepth} levels`);
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  invalidValue(name, value, "not a valid JSON object");
}

function parseRedrivePolicy(value: string, identity: SqsIdentity): RedrivePolicy | undefined {
  if (value === "") return undefined;
  const json = parseJsonObject("RedrivePolicy", value);
  const arn = json.deadLetterTargetArn;
  const deadLetterQueueName = typeof arn === "string" ? queueNameFromArn(identity, arn) : undefined;
  if (deadLetterQueueName === undefined) invalidValue("RedrivePolicy", value, "deadLetterTargetArn must be the ARN of a queue of this account and region");
  const count = json.maxReceiveCount;
  const maxReceiveCount = typeof count === "number" ? count : typeof count === "string" && /^\d{1,10}$/.test(count) ? Number(count) : Number.NaN;
  if (!Number.isInteger(maxReceiveCount)) invalidValue("RedrivePolicy", value, "maxReceiveCount must be an integer");
  return { deadLetterQueueName, maxReceiveCount };
}

const redrivePermissions = new Set(["allowAll", "denyAll", "byQueue"]);

function parseRedriveAllowPolicy(value: string, identity: SqsIdentity): RedriveAllowPolicy | undefined {
  if (value === "") return undefined;
  const json = parseJsonObject("RedriveAllowPolicy", value);
  const permission = json.redrivePermission;
  if (typeof permission !== "string" || !redrivePermissions.has(permission)) {
    invalidValue("RedriveAllowPolicy", value, "redrivePermission must be allowAll, denyAll or byQueue");
  }
  const arns = json.sourceQueueArns;
  if (permission !== "byQueue") {
    if (arns !== undefined) invalidValue("RedriveAllowPolicy", value, "sourceQueueArns is allowed only with redrivePermission byQueue");
    return { redrivePermission: permission as RedriveAllowPolicy["redrivePermission"] };
  }
  const names = Array.isArray(arns) ? arns.map((a: unknown) => (typeof a === "string" ? queueNameFromArn(identity, a) : undefined)) : [];
  const valid = names.length >= 1 && names.length <= 10 && names.every((n) => n !== undefined);
  if (!valid) invalidValue("RedriveAllowPolicy", value, "sourceQueueArns must list 1 to 10 queue ARNs of this account and region");
  return { redrivePermission: "byQueue", sourceQueueNames: names as string[] };
}

function integerAttribute(name: string, key: "visibilityTimeoutSeconds" | "delaySeconds" | "messageRetentionPeriodSeconds" | "maximumMessageSizeBytes" | "receiveMessageWaitTimeSeconds" | "defaultPriority"): AttributeSpec {
  return {
    read: ({ queue }) => String(queue.config[key]),
    write: (value, patch) => void (patch[key] = parseInteger(name, value)),
  };
}

const seconds = (ms: number): string => String(Math.floor(ms / 1000));

const attributeSpecs: Record<string, AttributeSpec> = {
  Policy: {
    read: ({ queue }) => queue.config.policy,
    write: (value, patch) => {
      if (Buffer.byteLength(value, "utf8") > limits.policyMaxBytes) {
        fail("InvalidAttributeValue", `Invalid value for the parameter Policy. Reason: a queue policy is at most ${limits.policyMaxBytes} bytes.`);
      }
      if (value !== "") parseJsonObject("Policy", value);
      patch.policy = value === "" ? undefined : value;
    },
  },
  VisibilityTimeout: integerAttribute("VisibilityTimeout", "visibilityTimeoutSeconds"),
  MaximumMessageSize: integerAttribute("MaximumMessageSize", "maximumMessageSizeBytes"),
  MessageRetentionPeriod: integerAttribute("MessageRetentionPeriod", "messageRetentionPeriodSeconds"),
  ApproximateNumberOfMessages: { read: ({ stats }) => String(stats?.visible ?? 0), needsStats: true },
  ApproximateNumberOfMessagesNotVisible: { read: ({ stats }) => String(stats?.inFlight ?? 0), needsStats: true },
  ApproximateNumberOfMessagesDelayed: { read: ({ stats }) => String(stats?.delayed ?? 0), needsStats: true },
  // SQS reports both timestamps in seconds, unlike message timestamps (milliseconds).
  CreatedTimestamp: { read: ({ queue }) => seconds(queue.createdAtMs) },
  LastModifiedTimestamp: { read: ({ queue }) => seconds(queue.updatedAtMs) },
  QueueArn: { read: ({ queue, identity }) => queueArn(identity, queue.name) },
  DelaySeconds: integerAttribute("DelaySeconds", "delaySeconds"),
  ReceiveMessageWaitTimeSeconds: integerAttribute("ReceiveMessageWaitTimeSeconds", "receiveMessageWaitTimeSeconds"),
  RedrivePolicy: {
    read: ({ queue, identity }) => {
      const p = queue.config.redrivePolicy;
      return p && redrivePolicyJson(identity, p);
    },
    write: (value, patch, identity) => void (patch.redrivePolicy = parseRedrivePolicy(value, identity)),
  },
  RedriveAllowPolicy: {
    read: ({ queue, identity }) => {
      const p = queue.config.redriveAllowPolicy;
      if (!p) return undefined;
      const sourceQueueArns = p.sourceQueueNames?.map((name) => queueArn(identity, name));
      return JSON.stringify(sourceQueueArns ? { redrivePermission: p.redrivePermission, sourceQueueArns } : { redrivePermission: p.redrivePermission });
    },
    write: (value, patch, identity) => void (patch.redriveAllowPolicy = parseRedriveAllowPolicy(value, identity)),
  },
  FifoQueue: {
    read: ({ queue }) => (queue.config.fifoQueue ? "true" : undefined),
    write: (value, patch) => void (patch.fifoQueue = parseBoolean("FifoQueue", value)),
    createOnly: true,
  },
  ContentBasedDeduplication: {
    read: ({ queue }) => String(queue.config.contentBasedDeduplication),
    write: (value, patch) => void (patch.contentBasedDeduplication = parseBoolean("ContentBasedDeduplication", value)),
    fifoOnly: true,
  },
  DeduplicationScope: {
    read: ({ queue }) => queue.config.deduplicationScope,
    write: (value, patch) => {
      if (value !== "queue" && value !== "messageGroup") invalidValue("DeduplicationScope", value, "must be queue or messageGroup");
      patch.deduplicationScope = value;
    },
    fifoOnly: true,
    fifoOnlyMessage: "You can specify the DeduplicationScope only when FifoQueue is set to true.",
  },
  FifoThroughputLimit: {
    read: ({ queue }) => queue.config.fifoThroughputLimit,
    write: (value, patch) => {
      if (value !== "perQueue" && value !== "perMessageGroupId") invalidValue("FifoThroughputLimit", value, "must be perQueue or perMessageGroupId");
      patch.fifoThroughputLimit = value;
    },
    fifoOnly: true,
    fifoOnlyMessage: "You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
  },
  KmsMasterKeyId: {
    read: ({ queue }) => queue.config.kmsMasterKeyId,
    write: (value, patch) => void (patch.kmsMasterKeyId = value === "" ? undefined : value),
  },
  KmsDataKeyReusePeriodSeconds: {
    // SQS shows the reuse period only for queues encrypted with a KMS key.
    read: ({ queue }) => (queue.config.kmsMasterKeyId ? String(queue.config.kmsDataKeyReusePeriodSeconds) : undefined),
    write: (value, patch) => void (patch.kmsDataKeyReusePeriodSeconds = parseInteger("KmsDataKeyReusePeriodSeconds", value)),
  },
  SqsManagedSseEnabled: {
    read: ({ queue }) => String(queue.config.sqsManagedSseEnabled),
    write: (value, patch) => void (patch.sqsManagedSseEnabled = parseBoolean("SqsManagedSseEnabled", value)),
  },
  "Sluice.DefaultPriority": { ...integerAttribute("Sluice.DefaultPriority", "defaultPriority"), extension: true },
};

const allNames = Object.keys(attributeSpecs).filter((name) => !attributeSpecs[name]!.extension);

function unknownAttribute(name: string): never {
  fail("InvalidAttributeName", `Unknown Attribute ${name}.`);
}

/**
 * FifoQueue after creation, as SQS answers it: a standard queue has no such attribute; a FIFO
 * queue accepts `true` again (infrastructure tools re-apply every attribute they manage) and
 * refuses a change of type.
 */
function checkUnchangedQueueType(name: string, value: string, fifo: boolean): void {
  if (!fifo) unknownAttribute(name);
  // SQS's recorded words, without the value the other attribute errors quote.
  if (!parseBoolean(name, value)) fail("InvalidAttributeValue", `Invalid value for the parameter ${name}. Reason: Modifying queue type is not supported.`);
}

/**
 * Turns CreateQueue/SetQueueAttributes attributes into a config patch. `fifo` says whether the
 * queue is (or will be) FIFO, which decides whether FIFO-only attributes exist for it.
 */
export function attributesToConfigPatch(attributes: Record<string, string>, p: { creating: boolean; fifo: boolean; identity: SqsIdentity }): ConfigPatch {
  const patch: ConfigPatch = {};
  for (const name in attributes) {
    const spec = attributeSpecs[name];
    if (!spec?.write) unknownAttribute(name);
    if (spec.createOnly && !p.creating) {
      checkUnchangedQueueType(name, attributes[name]!, p.fifo);
      continue;
    }
    if (spec.fifoOnly && !p.fifo) {
      if (spec.fifoOnlyMessage !== undefined) fail("InvalidAttributeName", spec.fifoOnlyMessage);
      unknownAttribute(name);
    }
    spec.write(attributes[name]!, patch, p.identity);
  }
  applyEncryptionChoice(patch);
  return patch;
}

/**
 * SSE-KMS and SSE-SQS are one choice in SQS: asking for both at once is refused, a KMS key turns
 * SQS-managed encryption off, and turning SQS-managed encryption on drops the key. Otherwise a
 * queue would report two encryptions, which infrastructure tools comparing state would flag.
 */
function applyEncryptionChoice(patch: ConfigPatch): void {
  const kmsKey = patch.kmsMasterKeyId;
  if (kmsKey !== undefined && patch.sqsManagedSseEnabled === true) {
    fail("InvalidAttributeName", "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.");
  }
  if (kmsKey !== undefined) patch.sqsManagedSseEnabled = false;
  // An own property set to undefined, so it overrides the stored key when the patch is applied.
  else if (patch.sqsManagedSseEnabled === true) patch.kmsMasterKeyId = undefined;
}

/** SQS's QueueAlreadyExists: it names the attribute(s) whose value differs. */
export function queueExistsOtherwise(existing: QueueConfig, requested: Partial<QueueConfig>): never {
  const names = differingConfigKeys(existing, requested).map((key) => attributeOfConfigKey[key]);
  return fail("QueueAlreadyExists", `A queue already exists with the same name and a different value for attribute ${names.join(", ")}`);
}

/** Validates GetQueueAttributes names and expands `All` (extensions only come when named). */
export function resolveAttributeNames(names: string[] | undefined): { names: string[]; needsStats: boolean } {
  const explicit = new Set<string>();
  let all = false;
  for (const name of names ?? []) {
    if (name === "All") all = true;
    else if (attributeSpecs[name]) explicit.add(name);
    else unknownAttribute(name);
  }
  const resolved = all ? [...new Set([...allNames, ...explicit])] : [...explicit];
  return { names: resolved, needsStats: resolved.some((n) => attributeSpecs[n]!.needsStats) };
}

/** The attributes of `queue` among `names` (as resolved above) that it has. */
export function readQueueAttributes(names: string[], ctx: ReadContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const spec = attributeSpecs[name]!;
    if (spec.fifoOnly && !ctx.queue.config.fifoQueue) continue;
    const value = spec.read(ctx);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
