#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * The `sluice` command. Each subcommand lives in commands/<name>.ts and registers itself here;
 * serve is the first, worker/queues/send/jobs/dlq/bench follow the same pattern.
 */
import { Command } from "commander";
import { registerJobsCommand } from "./commands/jobs.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerWorkerCommand } from "./commands/worker.js";
import { packageVersion } from "./package-version.js";

const program = new Command()
  .name("sluice")
  .description("A durable, SQS-compatible message queue and async-job service for AI inference.")
  .version(packageVersion())
  .showHelpAfterError();

registerServeCommand(program);
registerWorkerCommand(program);
registerJobsCommand(program);

await program.parseAsync(process.argv);
