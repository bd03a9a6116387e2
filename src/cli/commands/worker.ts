/**
 * `sluice worker <module>`: imports a handler module and runs its default export as a worker on
 * --queue until SIGTERM/SIGINT, which drains (stop leasing, finish in-flight jobs, hand back the
 * rest) and exits 0. Prints one line when it is polling — `Sluice worker ready on queue <q>` —
 * which scripts and tests wait for. Exits 1 when the server refuses its lease requests in a way
 * no retry fixes (a wrong URL or token, say), rather than retrying forever while looking healthy.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BatchHandler, BatchOptions, JobHandler, Worker, WorkerDefinition, WorkerOptions } from "@sluice/client";
import type { Command } from "commander";
import { type ConnectionFlags, UsageError, addConnectionOptions, exitWithError, parseIntFlag, sluiceFromFlags } from "./sdk-connection.js";

interface WorkerFlags extends ConnectionFlags {
  queue: string;
  concurrency?: string;
  batchSize?: string;
  batchWindowMs?: string;
  leaseSeconds?: string;
  waitSeconds?: string;
  drainTimeoutMs?: string;
  labels?: string;
  workerId?: string;
}

/** Without --batch-window-ms, a batch waits this long for company after its first job. */
const defaultBatchWindowMs = 20;

type LoadedDefinition = Exclude<WorkerDefinition, JobHandler>;

/** The handler module was found but failed to import: it threw, or has a syntax error. */
class HandlerImportError extends Error {
  constructor(
    readonly modulePath: string,
    readonly thrown: unknown,
  ) {
    super(`cannot load the handler module ${modulePath}`);
  }
}

async function importHandlerModule(modulePath: string): Promise<{ default?: unknown }> {
  const file = resolve(process.cwd(), modulePath);
  const stats = statSync(file, { throwIfNoEntry: false });
  if (!stats) throw new UsageError(`handler module ${modulePath} not found (no file ${file})`);
  if (!stats.isFile()) throw new UsageError(`handler module ${modulePath} is not a file (${file})`);
  try {
    return (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw new HandlerImportError(modulePath, err);
  }
}

/**
 * Says which module failed and what it threw, and exits 1. A SyntaxError is left for Node to
 * report as an uncaught exception: only that report shows the file and line of the syntax error
 * (in the module or in anything it imports), which the error's own stack lacks on Node 20.
 */
function reportImportFailure(err: HandlerImportError): void {
  if (err.thrown instanceof SyntaxError) {
    console.error(`sluice worker: ${err.message}: it has a syntax error (Node's report, with the file and line, follows)`);
    setImmediate(() => {
      throw err.thrown;
    });
    return;
  }
  console.error(`sluice worker: ${err.message}: importing it threw:`, err.thrown);
  process.exit(1);
}

async function loadDefinition(modulePath: string): Promise<LoadedDefinition> {
  const mod = await importHandlerModule(modulePath);
  const def = mod.default;
  if (typeof def === "function") return { handler: def as JobHandler };
  if (typeof def === "object" && def !== null && typeof (def as { handler?: unknown }).handler === "function") return def as LoadedDefinition;
  throw new UsageError(`${modulePath} must default-export a handler function or { handler, batch? }`);
}

function batchFrom(flags: WorkerFlags, def: LoadedDefinition): BatchOptions | undefined {
  const size = parseIntFlag(flags.batchSize, "--batch-size", 1, 100) ?? def.batch?.size;
  if (size === undefined) {
    if (flags.batchWindowMs !== undefined) throw new UsageError("--batch-window-ms needs --batch-size (or a batch in the module)");
    return undefined;
  }
  const windowMs = parseIntFlag(flags.batchWindowMs, "--batch-window-ms", 0, 10_000) ?? def.batch?.windowMs ?? defaultBatchWindowMs;
  return { size, windowMs };
}

/** The first SIGTERM/SIGINT drains and exits 0; a second one exits 1 at once. */
function drainOnSignals(worker: Worker, drainTimeoutMs: number | undefined): void {
  let draining = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      console.error(`sluice worker: ${signal} again, exiting without draining`);
      process.exit(1);
    }
    draining = true;
    console.error(`sluice worker: ${signal}: draining ${worker.stats.active} running job(s)`);
    worker.close(drainTimeoutMs === undefined ? {} : { timeoutMs: drainTimeoutMs }).then(
      () => {
        console.error(`sluice worker: drained (${JSON.stringify(worker.stats)})`);
        process.exit(0);
      },
      (err: unknown) => {
        console.error("sluice worker: error while draining", err);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** `--labels gpu=a100,region=eu` (the flag wins over the module's labels). */
function labelsOption(flag: string | undefined, fromModule: Record<string, string> | undefined): { labels?: Record<string, string> } {
  if (flag === undefined) return fromModule === undefined ? {} : { labels: fromModule };
  const labels: Record<string, string> = {};
  for (const pair of flag.split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--labels must be key=value pairs separated by commas, got ${JSON.stringify(pair)}`);
    labels[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return { labels };
}

/** The server's own rule for a (standard: job queues are) queue name, as a usage error. */
async function checkQueueFlag(queue: string): Promise<void> {
  // Core loads only for this command: the CLI's other commands start without it.
  const { validateQueueName } = await import("../../core/index.js");
  try {
    validateQueueName(queue, false);
  } catch {
    throw new UsageError(`--queue must be 1–80 characters of A–Z, a–z, 0–9, _ and -, got ${JSON.stringify(queue)}`);
  }
}

async function runWorker(modulePath: string, flags: WorkerFlags): Promise<void> {
  // Checked before the module loads: the server would refuse every lease, long after "ready".
  await checkQueueFlag(flags.queue);
  // Likewise the URL: a module may take long to import (a model to load) before a typo shows.
  const queue = sluiceFromFlags(flags).queue(flags.queue);
  const def = await loadDefinition(modulePath);
  const batch = batchFrom(flags, def);
  const options: Omit<WorkerOptions, "batch"> = {
    concurrency: parseIntFlag(flags.concurrency, "--concurrency", 1, 10_000) ?? def.concurrency ?? 1,
    leaseSeconds: parseIntFlag(flags.leaseSeconds, "--lease-seconds", 1, 43_200) ?? def.leaseSeconds ?? 30,
    waitSeconds: parseIntFlag(flags.waitSeconds, "--wait-seconds", 0, 20) ?? 20,
    ...labelsOption(flags.labels, def.labels),
    ...(flags.workerId !== undefined ? { workerId: flags.workerId } : {}),
  };
  const drainTimeoutMs = parseIntFlag(flags.drainTimeoutMs, "--drain-timeout-ms", 0, 2_147_483_647);
  // A module's batch setting means its handler takes an array; a bare --batch-size makes the CLI
  // promise that too, so the handler must be written for arrays (the flag says so in its help).
  const worker = batch
    ? queue.work(def.handler as BatchHandler, { ...options, batch })
    : queue.work(def.handler as JobHandler, options);
  drainOnSignals(worker, drainTimeoutMs);
  // The worker stopped on its own (it has drained): the error says why; exit 1 with it.
  worker.done.catch((err: unknown) => {
    console.error("sluice worker: stopped: the server refuses its lease requests");
    exitWithError(err);
  });
  const shape = batch ? `batches of ≤ ${batch.size} within ${batch.windowMs} ms` : "single jobs";
  console.log(`Sluice worker ready on queue ${flags.queue} (concurrency ${options.concurrency}, ${shape}, lease ${options.leaseSeconds} s)`);
}

export function registerWorkerCommand(program: Command): void {
  addConnectionOptions(
    program
      .command("worker <module>")
      .description("Run a handler module's default export as a worker: a function (job, ctx) => output, or { handler, batch? }.")
      .requiredOption("--queue <name>", "queue to lease jobs from (1–80 characters of A–Z, a–z, 0–9, _ and -)")
      .option("--concurrency <n>", "handlers (or batches) running at once (default 1)")
      .option("--batch-size <n>", "lease up to n jobs at a time and pass them to the handler as an array (1–100)")
      .option("--batch-window-ms <ms>", `with --batch-size: how long to gather a batch after its first job (default ${defaultBatchWindowMs})`)
      .option("--lease-seconds <s>", "lease length; heartbeats extend it every third of it (default 30)")
      .option("--wait-seconds <s>", "long-poll length of each lease request, 0–20 (default 20)")
      .option("--labels <pairs>", "the worker's labels, e.g. gpu=a100,region=eu: it also leases the jobs whose requires these contain")
      .option("--worker-id <id>", "names the worker in `sluice workers` (default: one id per process)")
      .option("--drain-timeout-ms <ms>", "on SIGTERM, after this long hand back the jobs whose handlers still run (their attempt counts) and exit (default: wait for them)"),
  ).action((modulePath: string, flags: WorkerFlags) =>
    runWorker(modulePath, flags).catch((err: unknown) => (err instanceof HandlerImportError ? reportImportFailure(err) : exitWithError(err))),
  );
}
