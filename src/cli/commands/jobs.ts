/**
 * `sluice jobs submit|get|wait|cancel|list`: the jobs API from the shell, through the SDK.
 * Each prints the job (or page of jobs) as JSON on stdout, so it pipes into jq.
 */
import { JobWaitTimeoutError, type Sluice, type SubmitOptions } from "@sluice/client";
import type { Command } from "commander";
import { type ConnectionFlags, UsageError, addConnectionOptions, exitWithError, parseIntFlag, parseJson, print, sluiceFromFlags } from "./sdk-connection.js";

interface SubmitFlags extends ConnectionFlags {
  wait?: boolean;
  timeoutMs?: string;
  idempotencyKey?: string;
  priority?: string;
  delaySeconds?: string;
  maxAttempts?: string;
  timeoutSeconds?: string;
  metadata?: string;
}

interface WaitFlags extends ConnectionFlags {
  timeoutMs?: string;
}

interface ListFlags extends ConnectionFlags {
  status?: string;
  limit?: string;
  cursor?: string;
}

function parseTimeoutMs(flag: string | undefined): number | undefined {
  return parseIntFlag(flag, "--timeout-ms", 0, 2_147_483_647);
}

/**
 * How `jobs submit --wait` and `jobs wait` exit once the job is finished: 0 only when it
 * succeeded, so `sluice jobs submit q '{}' --wait && next-step` stops after a failed job.
 * 1 (an error or a timeout) and 2 (bad usage) mean what they mean for every command.
 */
export const exitJobFailed = 3;

/** The exit-code table every `sluice jobs` help screen ends with. */
const exitCodesHelp = `
Exit status:
  0  success (with --wait / jobs wait: the job succeeded)
  1  an error: the server answered an error, could not be reached, or --timeout-ms passed
     first (the job's last state is still printed)
  2  bad usage
  ${exitJobFailed}  with --wait / jobs wait: the job ended failed or canceled (the job is printed)`;

/**
 * Waits for a job, printing it either way. A job that ended failed or canceled exits
 * ${exitJobFailed}; a timeout prints the last state, then exits 1.
 */
async function waitAndPrint(sluice: Sluice, id: string, timeoutMs: number | undefined): Promise<void> {
  try {
    const job = await sluice.jobs.wait(id, timeoutMs === undefined ? {} : { timeoutMs });
    print(job);
    if (job.status !== "succeeded") {
      console.error(`sluice: job ${job.id} ended ${job.status}`);
      process.exit(exitJobFailed);
    }
  } catch (err) {
    if (!(err instanceof JobWaitTimeoutError)) throw err;
    print(err.job);
    console.error(`sluice: ${err.message}`);
    process.exit(1);
  }
}

async function submit(queue: string, inputJson: string, flags: SubmitFlags): Promise<void> {
  // Every flag is checked before the submit: a usage error must not leave a job behind.
  if (flags.timeoutMs !== undefined && !flags.wait) throw new UsageError("--timeout-ms needs --wait");
  const timeoutMs = parseTimeoutMs(flags.timeoutMs);
  const input = parseJson(inputJson, "<json>");
  const metadata = flags.metadata === undefined ? undefined : parseJson(flags.metadata, "--metadata");
  if (metadata !== undefined && (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))) throw new UsageError("--metadata must be a JSON object");
  const opts: SubmitOptions = {
    idempotencyKey: flags.idempotencyKey,
    priority: parseIntFlag(flags.priority, "--priority", 0, 9),
    delaySeconds: parseIntFlag(flags.delaySeconds, "--delay-seconds", 0, 43_200),
    maxAttempts: parseIntFlag(flags.maxAttempts, "--max-attempts", 1, 100),
    timeoutSeconds: parseIntFlag(flags.timeoutSeconds, "--timeout-seconds", 1, 86_400),
    metadata,
  };
  const sluice = sluiceFromFlags(flags);
  const job = await sluice.queue(queue).submit(input, opts);
  if (flags.wait) await waitAndPrint(sluice, job.id, timeoutMs);
  else print(job.job);
}

/** Wraps an action so every failure goes through exitWithError. */
function run<A extends unknown[]>(action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args) => action(...args).catch(exitWithError);
}

export function registerJobsCommand(program: Command): void {
  const jobs = program.command("jobs").description("Submit, inspect, wait for and cancel jobs.").addHelpText("after", exitCodesHelp);

  addConnectionOptions(
    jobs
      .command("submit <queue> <json>")
      .description(`Submit a job whose input is <json>; prints the job (with --wait, once it is finished, exiting ${exitJobFailed} if it failed or was canceled).`)
      .option("--wait", "wait until the job is finished and print its result")
      .option("--timeout-ms <ms>", "with --wait: give up after this long (exit 1)")
      .option("--idempotency-key <key>", "the same key and input give back the same job")
      .option("--priority <n>", "0–9, higher first")
      .option("--delay-seconds <s>", "not leasable before this many seconds")
      .option("--max-attempts <n>", "attempts before the job fails for good")
      .option("--timeout-seconds <s>", "per-attempt time limit")
      .option("--metadata <json>", "a JSON object returned with the job")
      .addHelpText("after", exitCodesHelp),
  ).action(run(submit));

  addConnectionOptions(jobs.command("get <id>").description("Print a job.")).action(
    run(async (id: string, flags: ConnectionFlags) => print(await sluiceFromFlags(flags).jobs.get(id))),
  );

  addConnectionOptions(
    jobs
      .command("wait <id>")
      .description(`Wait until a job is finished, then print it; exits ${exitJobFailed} if it failed or was canceled.`)
      .option("--timeout-ms <ms>", "give up after this long (exit 1)")
      .addHelpText("after", exitCodesHelp),
  ).action(run(async (id: string, flags: WaitFlags) => waitAndPrint(sluiceFromFlags(flags), id, parseTimeoutMs(flags.timeoutMs))));

  addConnectionOptions(jobs.command("cancel <id>").description("Cancel a job (a running job stops at its worker's next heartbeat).")).action(
    run(async (id: string, flags: ConnectionFlags) => print(await sluiceFromFlags(flags).jobs.cancel(id))),
  );

  addConnectionOptions(
    jobs
      .command("list <queue>")
      .description("List a queue's jobs, newest first.")
      .option("--status <status>", "queued | running | succeeded | failed | canceled")
      .option("--limit <n>", "1–1000 (default 100)")
      .option("--cursor <cursor>", "the nextCursor of the previous page"),
  ).action(
    run(async (queue: string, flags: ListFlags) => {
      const statuses = ["queued", "running", "succeeded", "failed", "canceled"] as const;
      const status = statuses.find((s) => s === flags.status);
      if (flags.status !== undefined && !status) throw new UsageError(`--status must be one of ${statuses.join(", ")}`);
      const limit = parseIntFlag(flags.limit, "--limit", 1, 1000);
      print(await sluiceFromFlags(flags).jobs.list(queue, { status, limit, cursor: flags.cursor }));
    }),
  );
}
