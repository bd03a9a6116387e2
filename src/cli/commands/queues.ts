/**
 * `sluice queues list|create|delete|purge|stats|pause|resume|peek`: the admin API (docs/admin-api.md) from
 * the shell. Tables on a terminal; JSON with --json or when stdout is piped.
 */
import type { Command } from "commander";
import { type Connection, adminJson } from "./admin-http.js";
import { type OutputFlags, printJson, printRecord, printTable, wantsJson } from "./output.js";
import { type ConnectionFlags, UsageError, addConnectionOptions, connectionFromFlags, exitWithError, parseIntFlag } from "./sdk-connection.js";

type Flags = ConnectionFlags & OutputFlags;

/** What the CLI reads of a queue as the admin API answers it. */
export interface QueueWire {
  name: string;
  deadLetterQueue: string | null;
  stats: {
    messages: { visible: number; inFlight: number; delayed: number };
    deadLetterMessages: number | null;
    oldestVisibleAgeSeconds: number | null;
  };
  autoscaling?: { workersDesired: number };
  [field: string]: unknown;
}

interface PeekedWire {
  messageId: string;
  body: string;
  state: string;
  receiveCount: number;
  sentAt: string;
}

const queuePath = (name: string): string => `/v1/queues/${encodeURIComponent(name)}`;

/** Runs a command's action, reporting its failure with the CLI's exit codes. */
export function action<A extends unknown[]>(run: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args) => run(...args).catch(exitWithError);
}

/** The flags every admin command takes: where the server is (and the account acted for, unless `perAccount` is false), and JSON output. */
export function adminCommand(parent: Command, name: string, description: string, perAccount = true): Command {
  return addConnectionOptions(parent.command(name).description(description), perAccount).option("--json", "print JSON (the default when stdout is not a terminal)");
}

async function listQueues(conn: Connection, prefix: string | undefined, limit: number | undefined): Promise<QueueWire[]> {
  const queues: QueueWire[] = [];
  let cursor: string | null = null;
  do {
    const pageSize = Math.min(100, limit === undefined ? 100 : limit - queues.length);
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (prefix !== undefined) query.set("prefix", prefix);
    if (cursor !== null) query.set("cursor", cursor);
    const page: { queues: QueueWire[]; nextCursor: string | null } = await adminJson(conn, "GET", `/v1/queues?${query}`);
    queues.push(...page.queues);
    cursor = page.nextCursor;
  } while (cursor !== null && (limit === undefined || queues.length < limit));
  return queues;
}

function queueRow(q: QueueWire): Array<string | number> {
  const m = q.stats.messages;
  return [q.name, m.visible, m.inFlight, m.delayed, q.stats.oldestVisibleAgeSeconds ?? "—", q.deadLetterQueue ?? "—", q.stats.deadLetterMessages ?? "—", q.autoscaling?.workersDesired ?? "—"];
}
const queueHead = ["queue", "visible", "in flight", "delayed", "oldest (s)", "dead-letter queue", "dead letters", "workers"];

function intOption(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  return parseIntFlag(value, flag, min, max);
}

interface CreateFlags extends Flags {
  visibilityTimeout?: string;
  delay?: string;
  retention?: string;
  maxMessageSize?: string;
  receiveWait?: string;
  deadLetterQueue?: string;
  maxReceiveCount?: string;
  contentBasedDeduplication?: boolean;
  defaultPriority?: string;
}

/** The admin API's attributes from the create flags (the server checks their bounds). */
function attributesOf(f: CreateFlags): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) out[key] = value;
  };
  set("visibilityTimeoutSeconds", intOption(f.visibilityTimeout, "--visibility-timeout", 0, 1e9));
  set("delaySeconds", intOption(f.delay, "--delay", 0, 1e9));
  set("messageRetentionPeriodSeconds", intOption(f.retention, "--retention", 0, 1e9));
  set("maximumMessageSizeBytes", intOption(f.maxMessageSize, "--max-message-size", 0, 1e9));
  set("receiveMessageWaitTimeSeconds", intOption(f.receiveWait, "--receive-wait", 0, 1e9));
  set("defaultPriority", intOption(f.defaultPriority, "--default-priority", 0, 1e9));
  if (f.contentBasedDeduplication) out.contentBasedDeduplication = true;
  if ((f.deadLetterQueue === undefined) !== (f.maxReceiveCount === undefined)) throw new UsageError("--dead-letter-queue and --max-receive-count go together");
  if (f.deadLetterQueue !== undefined) out.redrivePolicy = { deadLetterQueue: f.deadLetterQueue, maxReceiveCount: intOption(f.maxReceiveCount, "--max-receive-count", 1, 1e9) };
  return out;
}

function requireYes(flags: { yes?: boolean }, what: string): void {
  if (!flags.yes) throw new UsageError(`${what} can't be undone: pass --yes to go ahead`);
}

export function registerQueuesCommand(program: Command): void {
  const queues = program.command("queues").description("List, create, delete, purge and inspect queues (the admin API).");

  adminCommand(queues, "list", "Every queue with its depth, oldest message, dead letters and the advisor's workers.")
    .option("--prefix <prefix>", "only queues whose name starts with this")
    .option("--limit <n>", "at most this many queues")
    .action(
      action(async (flags: Flags & { prefix?: string; limit?: string }) => {
        const limit = parseIntFlag(flags.limit, "--limit", 1, 1_000_000);
        const list = await listQueues(connectionFromFlags(flags), flags.prefix, limit);
        if (wantsJson(flags)) printJson({ queues: list });
        else printTable(queueHead, list.map(queueRow));
      }),
    );

  adminCommand(queues, "create", "Create a queue (FIFO when its name ends in .fifo); the same name and attributes again is no error.")
    .argument("<queue>")
    .option("--visibility-timeout <seconds>", "VisibilityTimeout (default 30)")
    .option("--delay <seconds>", "DelaySeconds (default 0)")
    .option("--retention <seconds>", "MessageRetentionPeriod (default 345600)")
    .option("--max-message-size <bytes>", "MaximumMessageSize (default 1048576)")
    .option("--receive-wait <seconds>", "ReceiveMessageWaitTimeSeconds (default 0)")
    .option("--dead-letter-queue <queue>", "where messages received too often go (with --max-receive-count)")
    .option("--max-receive-count <n>", "receives before a message goes to the dead-letter queue")
    .option("--content-based-deduplication", "FIFO queues: deduplicate by a hash of the body")
    .option("--default-priority <0-9>", "the priority of messages sent without one")
    .action(
      action(async (name: string, flags: CreateFlags) => {
        const { queue } = await adminJson<{ queue: QueueWire }>(connectionFromFlags(flags), "POST", "/v1/queues", { name, attributes: attributesOf(flags) });
        if (wantsJson(flags)) printJson({ queue });
        else printRecord(queue);
      }),
    );

  adminCommand(queues, "delete", "Delete a queue with its messages and jobs.")
    .argument("<queue>")
    .option("--yes", "really delete it")
    .action(
      action(async (name: string, flags: Flags & { yes?: boolean }) => {
        requireYes(flags, `Deleting ${name}`);
        const answer = await adminJson<{ deleted: string }>(connectionFromFlags(flags), "DELETE", queuePath(name));
        if (wantsJson(flags)) printJson(answer);
        else console.log(`Deleted ${answer.deleted}`);
      }),
    );

  adminCommand(queues, "purge", "Delete every message of a queue (once a minute per queue).")
    .argument("<queue>")
    .option("--yes", "really purge it")
    .action(
      action(async (name: string, flags: Flags & { yes?: boolean }) => {
        requireYes(flags, `Purging ${name}`);
        const answer = await adminJson<{ deleted: number }>(connectionFromFlags(flags), "POST", `${queuePath(name)}/purge`);
        if (wantsJson(flags)) printJson(answer);
        else console.log(`Purged ${name}: ${answer.deleted} message(s) deleted`);
      }),
    );

  adminCommand(queues, "stats", "A queue's attributes, job settings, live stats and the advisor's numbers.")
    .argument("<queue>")
    .action(
      action(async (name: string, flags: Flags) => {
        const { queue } = await adminJson<{ queue: QueueWire }>(connectionFromFlags(flags), "GET", queuePath(name));
        if (wantsJson(flags)) printJson({ queue });
        else printRecord(queue);
      }),
    );

  for (const [verb, paused, description] of [
    ["pause", true, "Pause a queue on every node: leases and receives return nothing (long polls wait) while submits and sends go on."],
    ["resume", false, "Resume a paused queue: waiting leases and receives are answered."],
  ] as const) {
    adminCommand(queues, verb, description)
      .argument("<queue>")
      .action(
        action(async (name: string, flags: Flags) => {
          const { queue } = await adminJson<{ queue: QueueWire }>(connectionFromFlags(flags), "PUT", queuePath(name), { paused });
          if (wantsJson(flags)) printJson({ queue });
          else console.log(`${queue.name}: ${queue.paused === true ? "paused" : "running"}`);
        }),
      );
  }

  adminCommand(queues, "peek", "Look at a queue's messages with bodies and attributes, changing nothing (no receive, no visibility change).")
    .argument("<queue>")
    .option("--limit <n>", "at most this many messages (1–100, default 10)")
    .action(
      action(async (name: string, flags: Flags & { limit?: string }) => {
        const limit = parseIntFlag(flags.limit, "--limit", 1, 100);
        const path = `${queuePath(name)}/messages${limit === undefined ? "" : `?limit=${limit}`}`;
        const answer = await adminJson<{ messages: PeekedWire[] }>(connectionFromFlags(flags), "GET", path);
        if (wantsJson(flags)) return printJson(answer);
        const short = (body: string): string => (body.length > 60 ? `${body.slice(0, 57)}…` : body).replace(/\s+/g, " ");
        printTable(
          ["message id", "state", "receives", "sent", "body"],
          answer.messages.map((m) => [m.messageId, m.state, m.receiveCount, m.sentAt, short(m.body)]),
        );
      }),
    );
}
