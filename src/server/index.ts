/**
 * The composition root: the one place that picks a concrete store and wires core, protocols and
 * the HTTP server together.
 */
import { mkdir } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { type Clock, systemClock, type IdSource, JobService, QueueService, type Store, loadReceiptSecret } from "../core/index.js";
import { loadWebhookSecret, startJobsBackground } from "../protocols/jobs/index.js";
import { WebhookSecretError } from "../protocols/jobs/webhooks/secret.js";
import { DatabaseUnreachableError, describeUrl, openPostgresStore } from "../stores/postgres/open.js";
import { SchemaTooNewError } from "../stores/postgres/migrate.js";
import { openSqliteStore } from "../stores/sqlite/sqlite-store.js";
import { openThreadedSqliteStore } from "../stores/sqlite/threaded-store.js";
import { buildApp } from "./app.js";
import { ConfigError, type ServerConfig, resolveServerConfig } from "./config.js";
import { CredentialsError } from "./credentials-file.js";
import { CredentialsHolder } from "./credentials-reload.js";
import { cryptoIdSource } from "./ids.js";
import { startMaintenance } from "./maintenance.js";
import { packageVersion } from "./package-version.js";

export { ConfigError, type ServerConfig } from "./config.js";

/** The store could not be opened (its database unreachable, or of a newer schema): the reason is the message. */
export class StoreOpenError extends Error {
  override readonly name = "StoreOpenError";
}

export interface RunningServer {
  url: string;
  port: number;
  app: FastifyInstance;
  queues: QueueService;
  jobs: JobService;
  /** The access keys and tokens in force (open mode: none); `reload()` is what SIGHUP does. */
  credentials: CredentialsHolder;
  /** Graceful: stops accepting, ends long polls, waits for in-flight requests, closes the store. Idempotent. */
  close(): Promise<void>;
}

export type StartServerOptions = Partial<ServerConfig> & { clock?: Clock; ids?: IdSource };

/**
 * SQLite on the event loop with pipelined WAL syncs: the fsync runs on libuv's pool, so its
 * latency never stalls requests, and no call pays for crossing threads (measured cheaper per
 * message and faster on 2 cores: docs/benchmarks.md). `--store-thread` moves it to a worker.
 */
async function openStore(config: ServerConfig): Promise<Store> {
  if (config.store === "postgres") {
    const url = config.postgresUrl!;
    return openPostgresStore({
      url,
      poolSize: config.postgresPoolSize,
      onError: logUnexpected,
      // Until the database answers (it may be starting with us): said once per attempt, on stderr.
      onRetry: (attempt, err, delayMs) => console.error(`sluice: PostgreSQL at ${describeUrl(url)} not reachable (attempt ${attempt}: ${err instanceof Error ? err.message : String(err)}); retrying in ${delayMs} ms`),
    }).catch((err: unknown) => {
      throw err instanceof DatabaseUnreachableError || err instanceof SchemaTooNewError ? new StoreOpenError(err.message) : err;
    });
  }
  const filename = join(config.dataDir, "sluice.db");
  if (config.storeThread) return openThreadedSqliteStore({ filename });
  return openSqliteStore({ filename, pipelinedSync: true });
}

/** How long close() lets in-flight requests finish before cutting their connections. */
const closeGraceMs = 10_000;

function logUnexpected(err: unknown): void {
  console.error("sluice: unexpected error", err);
}

function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export async function startServer(opts: StartServerOptions = {}): Promise<RunningServer> {
  const config = resolveServerConfig(opts);
  const clock = opts.clock ?? systemClock;
  await mkdir(config.dataDir, { recursive: true });
  // Before the store opens: a secret no receiver could verify stops the start with nothing to undo.
  const webhookSecret = await loadWebhookSecret({ configured: config.webhookSecret, dataDir: config.dataDir }).catch((err: unknown) => {
    throw err instanceof WebhookSecretError ? new ConfigError(err.message) : err;
  });
  const credentials = await CredentialsHolder.open({
    file: config.credentialsFile,
    env: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, apiToken: config.apiToken },
    defaultAccountId: config.accountId,
    events: {
      onReloaded: ({ keys, tokens }) => console.error(`sluice: credentials reloaded: ${keys} access keys, ${tokens} tokens`),
      onReloadFailed: (message) => console.error(`sluice: credentials not reloaded, the previous ones stay in force: ${message}`),
    },
  }).catch((err: unknown) => {
    throw err instanceof CredentialsError ? new ConfigError(err.message) : err;
  });
  const store = await openStore(config);
  const receiptSecret = await loadReceiptSecret(store).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  const ids = opts.ids ?? cryptoIdSource();
  const queues = new QueueService({ store, clock, ids, senderId: config.accountId, receiptSecret });
  const jobs = new JobService({ store, queues, clock, ids, senderId: config.accountId, region: config.region, accountId: config.accountId, idempotencyKeyTtlSeconds: config.idempotencyKeyTtlSeconds });
  const webhookPolicy = { allowPrivate: config.webhookAllowPrivate };
  const shutdown = new AbortController();
  const app = buildApp({
    queues,
    accountId: config.accountId,
    region: config.region,
    shutdownSignal: shutdown.signal,
    onUnexpectedError: logUnexpected,
    jobs: { jobs, clock, webhookPolicy, version: packageVersion() },
    credentials,
  });

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close().catch(logUnexpected);
    await store.close();
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  credentials.watchFile();
  const maintenance = startMaintenance({ queues, clock, onError: logUnexpected });
  // Job upkeep (expired leases, timeouts, pruning) and webhook delivery, resuming pending ones.
  const jobsBackground = startJobsBackground({ jobs, clock, webhookSecret, webhookPolicy, onError: logUnexpected });
  // Resumes message move tasks (DLQ redrives) a restart interrupted.
  await queues.moveTasks.runner.start();

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    // Long polls first: they would otherwise hold app.close() for up to 20 s.
    shutdown.abort();
    credentials.close();
    queues.waiters.closeAll();
    jobs.close();
    await maintenance.stop();
    await jobsBackground.stop();
    await queues.moveTasks.runner.stop();
    // app.close() waits for in-flight requests; a client that never lets go must not hold it forever.
    const forceClose = setTimeout(() => app.server.closeAllConnections(), closeGraceMs);
    forceClose.unref();
    try {
      await app.close();
    } finally {
      clearTimeout(forceClose);
    }
    await store.close();
  }

  return {
    url: `http://${urlHost(config.host)}:${port}`,
    port,
    app,
    queues,
    jobs,
    credentials,
    close: () => (closing ??= close()),
  };
}
