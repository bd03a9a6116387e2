/**
 * `sluice schedules put|get|list|delete|pause|resume`: scheduled jobs from the shell, through the
 * SDK. Each prints the schedule (with its next runs) or a page of them as JSON, for jq.
 */
import type { CatchUp, ScheduleSpec } from "@sluice/client";
import type { Command } from "commander";
import { type ConnectionFlags, UsageError, addConnectionOptions, exitWithError, parseIntFlag, parseJson, print, sluiceFromFlags } from "./sdk-connection.js";

interface PutFlags extends ConnectionFlags {
  queue?: string;
  cron?: string;
  everySeconds?: string;
  timezone?: string;
  input?: string;
  catchUp?: string;
  priority?: string;
  maxAttempts?: string;
  timeoutSeconds?: string;
  metadata?: string;
  tenant?: string;
}

const catchUps: readonly CatchUp[] = ["none", "latest", "all"];

/** The PUT body from the flags; every flag checked before anything is sent. */
export function scheduleSpecOf(flags: PutFlags): ScheduleSpec {
  if (!flags.queue) throw new UsageError("--queue is required: the queue each run submits a job to");
  if ((flags.cron === undefined) === (flags.everySeconds === undefined)) throw new UsageError("give exactly one of --cron and --every-seconds");
  const catchUp = catchUps.find((c) => c === flags.catchUp);
  if (flags.catchUp !== undefined && !catchUp) throw new UsageError(`--catch-up must be one of ${catchUps.join(", ")}`);
  const metadata = flags.metadata === undefined ? undefined : parseJson(flags.metadata, "--metadata");
  if (metadata !== undefined && (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))) throw new UsageError("--metadata must be a JSON object");
  const options = Object.fromEntries(
    Object.entries({
      priority: parseIntFlag(flags.priority, "--priority", 0, 9),
      maxAttempts: parseIntFlag(flags.maxAttempts, "--max-attempts", 1, 100),
      timeoutSeconds: parseIntFlag(flags.timeoutSeconds, "--timeout-seconds", 1, 86_400),
      metadata,
      tenant: flags.tenant,
    }).filter(([, v]) => v !== undefined),
  );
  return {
    queue: flags.queue,
    ...(flags.cron !== undefined ? { cron: flags.cron } : { everySeconds: parseIntFlag(flags.everySeconds, "--every-seconds", 1, 366 * 86_400)! }),
    ...(flags.timezone !== undefined ? { timezone: flags.timezone } : {}),
    input: flags.input === undefined ? null : parseJson(flags.input, "--input"),
    ...(Object.keys(options).length > 0 ? { options } : {}),
    ...(catchUp ? { catchUp } : {}),
  };
}

function run<A extends unknown[]>(action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args) => action(...args).catch(exitWithError);
}

export function registerSchedulesCommand(program: Command): void {
  const schedules = program.command("schedules").description("Jobs submitted on a cron expression or an interval.");

  addConnectionOptions(
    schedules
      .command("put <name>")
      .description("Create or replace a schedule; prints it with its next runs.")
      .option("--queue <queue>", "the queue each run submits a job to")
      .option("--cron <expr>", 'cron expression: 5 fields, or 6 with seconds first (e.g. "0 6 * * 1-5")')
      .option("--every-seconds <s>", "instead of --cron: every s seconds, aligned to the Unix epoch")
      .option("--timezone <zone>", "IANA time zone of the cron expression (default UTC)")
      .option("--input <json>", "every job's input (default null)")
      .option("--catch-up <mode>", "runs missed while no server ran: none | latest (default) | all")
      .option("--priority <n>", "0–9, higher first")
      .option("--max-attempts <n>", "attempts before a job fails for good")
      .option("--timeout-seconds <s>", "per-attempt time limit")
      .option("--metadata <json>", "a JSON object returned with each job")
      .option("--tenant <tenant>", "each job's tenant (fair sharing within the queue)"),
  ).action(
    run(async (name: string, flags: PutFlags) => {
      const spec = scheduleSpecOf(flags);
      print(await sluiceFromFlags(flags).schedules.put(name, spec));
    }),
  );

  addConnectionOptions(schedules.command("get <name>").description("Print a schedule and its next runs.")).action(
    run(async (name: string, flags: ConnectionFlags) => print(await sluiceFromFlags(flags).schedules.get(name))),
  );

  addConnectionOptions(
    schedules.command("list").description("List schedules by name.").option("--limit <n>", "1–1000 (default 100)").option("--cursor <cursor>", "the nextCursor of the previous page"),
  ).action(
    run(async (flags: ConnectionFlags & { limit?: string; cursor?: string }) => {
      const limit = parseIntFlag(flags.limit, "--limit", 1, 1000);
      print(await sluiceFromFlags(flags).schedules.list({ limit, cursor: flags.cursor }));
    }),
  );

  addConnectionOptions(schedules.command("delete <name>").description("Delete a schedule (the jobs it submitted stay).")).action(
    run(async (name: string, flags: ConnectionFlags) => {
      await sluiceFromFlags(flags).schedules.delete(name);
      console.error(`sluice: schedule ${name} deleted`);
    }),
  );

  addConnectionOptions(schedules.command("pause <name>").description("Pause a schedule: runs due while paused are skipped.")).action(
    run(async (name: string, flags: ConnectionFlags) => print(await sluiceFromFlags(flags).schedules.pause(name))),
  );

  addConnectionOptions(schedules.command("resume <name>").description("Resume a paused schedule from its next run after now.")).action(
    run(async (name: string, flags: ConnectionFlags) => print(await sluiceFromFlags(flags).schedules.resume(name))),
  );
}
