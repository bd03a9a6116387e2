/**
 * `sluice send <queue> <body>`: one message through the admin API (POST /v1/queues/{queue}/messages),
 * to any queue, FIFO ones included. `-` as the body reads it from stdin.
 */
import type { Command } from "commander";
import { adminJson } from "./admin-http.js";
import { type OutputFlags, printJson, printRecord, wantsJson } from "./output.js";
import { action, adminCommand } from "./queues.js";
import { type ConnectionFlags, UsageError, connectionFromFlags, parseIntFlag } from "./sdk-connection.js";

interface SendFlags extends ConnectionFlags, OutputFlags {
  attribute?: string[];
  delay?: string;
  priority?: string;
  groupId?: string;
  deduplicationId?: string;
}

/** `name=value` → a String message attribute. */
function attributesOf(pairs: string[]): Record<string, { dataType: string; stringValue: string }> | undefined {
  if (pairs.length === 0) return undefined;
  const out: Record<string, { dataType: string; stringValue: string }> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--attribute takes name=value, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq)] = { dataType: "String", stringValue: pair.slice(eq + 1) };
  }
  return out;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function registerSendCommand(program: Command): void {
  adminCommand(program, "send", "Send one message to a queue (any queue, FIFO ones too).")
    .argument("<queue>")
    .argument("<body>", "the message body; - reads it from stdin")
    .option("--attribute <name=value>", "a String message attribute (repeatable)", (v: string, all: string[] = []) => [...all, v])
    .option("--delay <seconds>", "DelaySeconds (standard queues)")
    .option("--priority <0-9>", "higher is received first")
    .option("--group-id <id>", "MessageGroupId (FIFO queues: required)")
    .option("--deduplication-id <id>", "MessageDeduplicationId (FIFO queues without content-based deduplication)")
    .action(
      action(async (queue: string, bodyArg: string, flags: SendFlags) => {
        const body = bodyArg === "-" ? await readStdin() : bodyArg;
        const request = {
          body,
          messageAttributes: attributesOf(flags.attribute ?? []),
          delaySeconds: parseIntFlag(flags.delay, "--delay", 0, 1e9),
          priority: parseIntFlag(flags.priority, "--priority", 0, 1e9),
          messageGroupId: flags.groupId,
          messageDeduplicationId: flags.deduplicationId,
        };
        const { message } = await adminJson<{ message: Record<string, unknown> }>(connectionFromFlags(flags), "POST", `/v1/queues/${encodeURIComponent(queue)}/messages`, request);
        if (wantsJson(flags)) printJson({ message });
        else printRecord(message);
      }),
    );
}
