#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * The `sluice` command. Each subcommand lives in commands/<name>.ts and registers itself here;
 * serve is the first, worker/queues/send/jobs/dlq/bench follow the same pattern.
 */
import { Command } from "commander";
import { registerBackupCommand } from "./commands/backup.js";
import { registerConfigCommand } from "./commands/config.js";
import { registerDlqCommand } from "./commands/dlq.js";
import { registerQueuesCommand } from "./commands/queues.js";
import { registerSendCommand } from "./commands/send.js";
import { registerJobsCommand } from "./commands/jobs.js";
import { registerSchedulesCommand } from "./commands/schedules.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerWorkerCommand } from "./commands/worker.js";
import { registerWorkersCommand } from "./commands/workers.js";
import { packageVersion } from "../server/package-version.js";

const program = new Command()
  .name("sluice")
  .description("A durable, SQS-compatible message queue and async-job service for AI inference.")
  .version(packageVersion())
  .showHelpAfterError()
  // Bad usage exits 2 whoever finds it — commander (an unknown option, a missing argument) or a
  // command (a bad value) — so scripts and supervisors can tell it from a failure (exit 1).
  // Inherited by every command registered below; --help and --version still exit 0.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  .addHelpText(
    "after",
    "\nExit status: 0 success, 1 an error, 2 bad usage; `jobs submit --wait` and `jobs wait` exit 3\nwhen the job ended failed or canceled, `dlq redrive` when the redrive it followed ended\nCANCELLED or FAILED. Admin commands print tables on a terminal, JSON with --json or when piped.",
  );

registerServeCommand(program);
registerWorkerCommand(program);
registerWorkersCommand(program);
registerJobsCommand(program);
registerQueuesCommand(program);
registerSendCommand(program);
registerDlqCommand(program);
registerBackupCommand(program);
registerSchedulesCommand(program);
registerConfigCommand(program);

await program.parseAsync(process.argv);
