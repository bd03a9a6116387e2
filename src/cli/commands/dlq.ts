/**
 * `sluice dlq redrive <queue> [--to queue]`: starts a redrive of a dead-letter queue (a message
 * move task, POST /v1/queues/{queue}/redrive) and follows it until it ends, with a progress bar
 * on a terminal (cli-progress, on stderr). Interrupting the command leaves the task running.
 */
import { SingleBar } from "cli-progress";
import type { Command } from "commander";
import { type Connection, adminJson } from "./admin-http.js";
import { type OutputFlags, printJson, printRecord, wantsJson } from "./output.js";
import { action, adminCommand } from "./queues.js";
import { type ConnectionFlags, parseIntFlag, connectionFromFlags } from "./sdk-connection.js";

interface RedriveFlags extends ConnectionFlags, OutputFlags {
  to?: string;
  maxPerSecond?: string;
  wait: boolean;
}

interface TaskWire {
  taskHandle: string;
  status: string;
  movedCount: number;
  toMoveCount: number;
  failureReason: string | null;
  [field: string]: unknown;
}

/** `dlq redrive` exits 3 when the redrive ended CANCELLED or FAILED (as `jobs wait` for a failed job). */
export const exitRedriveNotCompleted = 3;
const pollMs = 500;
const finalStatuses = new Set(["COMPLETED", "CANCELLED", "FAILED"]);

async function follow(conn: Connection, queue: string, task: TaskWire, showBar: boolean): Promise<TaskWire> {
  const bar = showBar ? new SingleBar({ format: "redrive {bar} {percentage}% | {value}/{total} messages | {status}", hideCursor: true, stream: process.stderr }) : undefined;
  bar?.start(Math.max(task.toMoveCount, 1), task.movedCount, { status: task.status });
  let current = task;
  try {
    while (!finalStatuses.has(current.status)) {
      await new Promise((r) => setTimeout(r, pollMs));
      const { tasks } = await adminJson<{ tasks: TaskWire[] }>(conn, "GET", `/v1/queues/${encodeURIComponent(queue)}/redrive`);
      current = tasks.find((t) => t.taskHandle === task.taskHandle) ?? current;
      // More than counted at the start may move (messages dead-lettered meanwhile): the bar grows.
      if (current.movedCount > current.toMoveCount) bar?.setTotal(current.movedCount);
      bar?.update(current.movedCount, { status: current.status });
    }
    if (current.status === "COMPLETED") bar?.update(Math.max(current.movedCount, current.toMoveCount, 1), { status: current.status });
  } finally {
    bar?.stop();
  }
  return current;
}

export function registerDlqCommand(program: Command): void {
  const dlq = program.command("dlq").description("Dead-letter queues: move their messages back (redrive).");
  adminCommand(dlq, "redrive", "Move a dead-letter queue's messages back to the queues they came from (or --to one queue), and follow it to the end.")
    .argument("<queue>", "the dead-letter queue")
    .option("--to <queue>", "move every message to this queue instead")
    .option("--max-per-second <n>", "move at most this many a second (1–500; default as fast as the store allows)")
    .option("--no-wait", "start it and print the task, without following it")
    .addHelpText("after", `\nExit status: 0 the redrive completed (or started, with --no-wait), 1 an error, 2 bad usage,\n${exitRedriveNotCompleted} it ended CANCELLED or FAILED (the task is printed).`)
    .action(
      action(async (queue: string, flags: RedriveFlags) => {
        const conn = connectionFromFlags(flags);
        const json = wantsJson(flags);
        const body = { destination: flags.to, maxPerSecond: parseIntFlag(flags.maxPerSecond, "--max-per-second", 1, 1e9) };
        const { task } = await adminJson<{ task: TaskWire }>(conn, "POST", `/v1/queues/${encodeURIComponent(queue)}/redrive`, body);
        const ended = flags.wait ? await follow(conn, queue, task, !json && process.stderr.isTTY === true) : task;
        if (json) printJson({ task: ended });
        else printRecord(ended);
        if (flags.wait && ended.status !== "COMPLETED") process.exitCode = exitRedriveNotCompleted;
      }),
    );
}
