/**
 * The composition root: the one place that picks a concrete store and wires core, protocols and
 * the HTTP server together.
 */
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { type AccountQuotas, BatchService, BlobService, startBlobSweeper, batchJobsOf, type Clock, FileService, systemClock, type IdSource, JobService, QueueService, quotaNames, ScheduleService, scheduleRunJobs, SluiceError, type Store, loadReceiptSecret } from "../core/index.js";
import { cronCompiler } from "./cron.js";
import { loadWebhookSecret, startJobsBackground } from "../protocols/jobs/index.js";
import { WebhookSecretError } from "../protocols/jobs/webhooks/secret.js";
import { DatabaseUnreachableError, describeUrl, openPostgresStore } from "../stores/postgres/open.js";
import { SchemaTooNewError } from "../stores/postgres/migrate.js";
import { SchemaTooNewError as SqliteSchemaTooNewError } from "../stores/sqlite/migrate.js";
import { DataDirInUseError, type DataDirLock, lockDataDir } from "../stores/sqlite/data-dir-lock.js";
import { openSqliteStore } from "../stores/sqlite/sqlite-store.js";
import { buildApp } from "./app.js";
import { ConfigError, type ServerConfig, resolveServerConfig } from "./config.js";
import { CredentialsError } from "./credentials-file.js";
import { CredentialsHolder } from "./credentials-reload.js";
import { AccountQuotaTable } from "./account-quotas.js";
import { RequestRate } from "../protocols/auth/request-rate.js";
import { DeclaredConfigError, DeclaredConfigHolder, loadDeclaredConfig } from "./declared/declared-config.js";
import { registerConfigRoute } from "./declared/config-route.js";
import { cryptoIdSource } from "./ids.js";
import { type Logger, createLogger } from "./logger.js";
import type { BackupFn } from "./backup-route.js";
import type { StoreTelemetry } from "./metrics/store-metrics.js";
import { otlpTracesEndpointOf, startRequestTracer } from "./tracing.js";
import { createTelemetry } from "./telemetry.js";
import { startMaintenance } from "./maintenance.js";
import { watchInFlight } from "./in-flight.js";
import { StoreWritability, dataDirProbe } from "./store-writability.js";
import { isSqliteDiskFull } from "../stores/sqlite/disk-full.js";
import { isPostgresDiskFull } from "../stores/postgres/disk-full.js";
import { checkDataDir, checkHostResolves } from "./start-checks.js";
import { packageVersion } from "./package-version.js";
import { openBlobStorage } from "./blobs/open-blob-storage.js";

export { ConfigError, type ServerConfig } from "./config.js";
export { type Logger, type LogLevel, createLogger } from "./logger.js";

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
  /** The declarative config file (--config); `reload()` applies it again, as SIGHUP does (no file: nothing). */
  declaredConfig: DeclaredConfigHolder;
  logger: Logger;
  /**
   * Graceful: for `drainSeconds` (default 0) /readyz answers 503 while requests are still served;
   * then new requests get 503, long polls end, in-flight requests are answered, the store closes.
   * Idempotent.
   */
  close(options?: { drainSeconds?: number }): Promise<void>;
}

/** `logger`: where the server logs (default: pino on stdout at `logLevel`, see logger.ts). */
export type StartServerOptions = Partial<ServerConfig> & {
  clock?: Clock;
  ids?: IdSource;
  logger?: Logger;
  /** Where to export request spans over OTLP/HTTP (default: from the OTEL_EXPORTER_OTLP_* environment; none: no tracing). */
  otlpTracesEndpoint?: string;
};

/** What the start line says about durability: when a write is acknowledged. */
function durabilityOf(config: ServerConfig): string {
  if (config.store === "postgres") return "PostgreSQL commit before ack";
  return "fsync before ack (pipelined WAL sync)";
}

/**
 * SQLite on the event loop with pipelined WAL syncs: the fsync runs on libuv's pool, so its
 * latency never stalls requests, and no call pays for crossing threads (measured cheaper per
 * message and faster on 2 cores than SQLite on a thread of its own: docs/benchmarks.md).
 */
/** The store, and its online backup when it has one (SQLite's; PostgreSQL has its own tools). */
/** The store, its online backup if it has one, and how to tell its disk is full and probe for space (store-writability.ts). */
async function openStore(config: ServerConfig, logger: Logger, telemetry: StoreTelemetry): Promise<{ store: Store; backup?: BackupFn; isDiskFull: (err: unknown) => boolean; probe: () => Promise<void> }> {
  if (config.store === "postgres") {
    const url = config.postgresUrl!;
    const store = await openPostgresStore({
      url,
      listenUrl: config.postgresListenUrl,
      poolSize: config.postgresPoolSize,
      onError: (err) => logger.error({ err }, "unexpected error"),
      // Until the database answers (it may be starting with us): said once per attempt.
      onRetry: (attempt, err, delayMs) =>
        logger.warn({ database: describeUrl(url), attempt, reason: err instanceof Error ? err.message : String(err), retryInMs: delayMs }, "PostgreSQL not reachable; retrying"),
    }).catch((err: unknown) => {
      throw err instanceof DatabaseUnreachableError || err instanceof SchemaTooNewError ? new StoreOpenError(err.message) : err;
    });
    // A row rewritten in a real table: PostgreSQL refuses it (53100) while its disk is full.
    const probe = async (): Promise<void> => {
      await store.db.query("INSERT INTO server_secrets (name, value) VALUES ('write-probe', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value", [String(Date.now())]);
    };
    return { store, isDiskFull: isPostgresDiskFull, probe };
  }
  const filename = join(config.dataDir, "sluice.db");
  try {
    const store = openSqliteStore({ filename, pipelinedSync: true, telemetry });
    for (const migration of store.migrationsApplied) logger.info({ migration, database: resolve(filename) }, "schema migration applied");
    return { store, backup: (destination) => store.backup(destination), isDiskFull: isSqliteDiskFull, probe: () => dataDirProbe(config.dataDir) };
  } catch (err) {
    throw err instanceof SqliteSchemaTooNewError ? new StoreOpenError(err.message) : err;
  }
}

function asConfigError(err: unknown): never {
  throw err instanceof DeclaredConfigError ? new ConfigError(err.message) : err;
}

/** While the disk is full, how often a probe write checks whether space is back. */
const storeProbeIntervalMs = 1_000;

/** How long close() lets in-flight requests finish before cutting their connections. */
const closeGraceMs = 10_000;

function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** One server per SQLite data dir (data-dir-lock.ts): taken before anything in the dir is touched. */
function lockSqliteDataDir(config: ServerConfig): DataDirLock | undefined {
  if (config.store !== "sqlite") return undefined;
  try {
    return lockDataDir(config.dataDir);
  } catch (err) {
    throw err instanceof DataDirInUseError ? new StoreOpenError(err.message) : err;
  }
}

export async function startServer(opts: StartServerOptions = {}): Promise<RunningServer> {
  const config = resolveServerConfig(opts);
  // Mistakes in the configuration end the start here, each in one line (start-checks.ts).
  await checkHostResolves(config.host);
  await checkDataDir(config.dataDir);
  const lock = lockSqliteDataDir(config);
  try {
    return await startLocked(opts, config, lock);
  } catch (err) {
    lock?.release();
    // A start on a full disk ends in one line (exit 2), as a data dir that can't be written does.
    if (isSqliteDiskFull(err) || isPostgresDiskFull(err) || (err instanceof SluiceError && err.code === "StorageFull")) throw new ConfigError(`The store's disk is full (${config.store === "sqlite" ? `--data-dir ${config.dataDir}` : "PostgreSQL"}): free some space and start again.`);
    throw err;
  }
}

async function startLocked(opts: StartServerOptions, config: ServerConfig, lock: DataDirLock | undefined): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  // A full disk is logged once, when it starts (store-writability.ts), not at every failed write.
  const logUnexpected = (err: unknown): void => {
    if (!(err instanceof SluiceError && err.code === "StorageFull")) logger.error({ err }, "unexpected error");
  };
  const clock = opts.clock ?? systemClock;
  // Before the store opens: a secret no receiver could verify stops the start with nothing to undo.
  const webhookSecret = await loadWebhookSecret({ configured: config.webhookSecret, dataDir: config.dataDir }).catch((err: unknown) => {
    throw err instanceof WebhookSecretError ? new ConfigError(err.message) : err;
  });
  const credentials = await CredentialsHolder.open({
    file: config.credentialsFile,
    env: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, apiToken: config.apiToken },
    defaultAccountId: config.accountId,
    events: {
      onReloaded: ({ keys, tokens }) => logger.info({ keys, tokens }, "credentials reloaded"),
      onReloadFailed: (message) => logger.warn({ reason: message }, "credentials not reloaded; the previous ones stay in force"),
    },
  }).catch((err: unknown) => {
    throw err instanceof CredentialsError ? new ConfigError(err.message) : err;
  });
  // Checked whole before the store opens: an invalid file stops the start having changed nothing.
  const declaredFile = config.configFile === undefined ? undefined : await loadDeclaredConfig(config.configFile, config.accountId).catch(asConfigError);
  const tracer = await startRequestTracer({ endpoint: opts.otlpTracesEndpoint ?? otlpTracesEndpointOf(process.env), serviceName: "sluice", version: packageVersion() });
  const telemetry = createTelemetry({
    logger,
    clock,
    version: packageVersion(),
    accountId: config.accountId,
    metricsQueueLimit: config.metricsQueueLimit,
    services: () => ({ queues, jobs }),
    storeFull: () => !writability.writable,
    quotaLimits: () => quotas.entries(),
  });
  const quotas = new AccountQuotaTable({
    credentials,
    defaultAccountId: config.accountId,
    defaults: quotaDefaultsOf(config),
    onRefused: (accountId, quota) => telemetry.quotas.refused(accountId, quota),
  });
  const requestRate = new RequestRate({
    limitOf: (accountId) => quotas.ofAccountId(accountId)?.requestsPerSecond,
    nowMs: () => clock.nowMs(),
    onRefused: (accountId) => telemetry.quotas.refused(accountId, "requestsPerSecond"),
  });
  const opened = await openStore(config, logger, telemetry.store);
  const { backup } = opened;
  const writability = new StoreWritability({ logger, isDiskFull: opened.isDiskFull, probe: opened.probe, probeIntervalMs: storeProbeIntervalMs, onChange: (ok) => telemetry.store.writable(ok) });
  // Every service writes through this: a write the disk has no room for is StorageFull (503).
  const store = writability.guard(opened.store);
  const receiptSecret = await loadReceiptSecret(store).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  const ids = opts.ids ?? cryptoIdSource();
  const blobStorage = openBlobStorage(config, receiptSecret, clock);
  const blobs = new BlobService({ store, storage: blobStorage, clock, ids, maxBlobBytesOf: (account) => quotas.of(account)?.maxBlobBytes, onQuotaRefused: (account) => quotas.refused(account, "maxBlobBytes") });
  const queues = new QueueService({ store, clock, ids, senderId: config.accountId, receiptSecret, onError: logUnexpected, observer: telemetry.queueObserver, quotas });
  const jobs = new JobService({
    store,
    queues,
    clock,
    ids,
    senderId: config.accountId,
    idempotencyKeyTtlSeconds: config.idempotencyKeyTtlSeconds,
    eventRetentionSeconds: config.eventRetentionSeconds,
    onError: logUnexpected,
    blobs,
  });
  const schedules = new ScheduleService({
    store,
    clock,
    cron: cronCompiler,
    runs: scheduleRunJobs(jobs),
    onFireError: (err, schedule) => logUnexpected(new Error(`schedule ${schedule.name}: its due run was not created (tried again on the next pass)`, { cause: err })),
  });
  const files = new FileService({ store, clock, ids });
  const batches = new BatchService({
    store,
    files,
    jobs: batchJobsOf(jobs),
    clock,
    ids,
    onAdvanceError: (err, batch) => logUnexpected(new Error(`batch ${batch.id}: its next step failed (tried again on the next pass)`, { cause: err })),
  });
  const declaredConfig = new DeclaredConfigHolder(config.configFile, config.accountId, { queues, jobs, schedules }, {
    onApplied: (summary) => logger.info(summary, "declarative config applied"),
    onApplyFailed: (message) => logger.error({ reason: message }, "declarative config not applied"),
  });
  if (declaredFile) {
    // Before listening: the server reports ready with the declared queues and schedules in place.
    await declaredConfig.applyLoaded(declaredFile).catch(async (err: unknown) => {
      jobs.close();
      queues.close();
      await store.close();
      throw err instanceof DeclaredConfigError ? new ConfigError(err.message) : err instanceof SluiceError ? new ConfigError(`${declaredFile.source.file}: ${err.message}`) : err;
    });
  }
  const unfollowJobs = telemetry.followJobs(jobs);
  const webhookPolicy = { allowPrivate: config.webhookAllowPrivate };
  const shutdown = new AbortController();
  let draining = false;
  const app = buildApp({
    queues,
    accountId: config.accountId,
    region: config.region,
    shutdownSignal: shutdown.signal,
    onUnexpectedError: logUnexpected,
    onRequestDone: tracer
      ? (outcome) => {
          telemetry.onRequestDone(outcome);
          tracer.record(outcome);
        }
      : telemetry.onRequestDone,
    traced: tracer !== undefined,
    metrics: telemetry.metrics,
    backup: { take: backup, dataDir: config.dataDir, logger },
    jobs: { jobs, schedules, files, batches, blobs, clock, webhookPolicy, version: packageVersion(), workersAdvice: telemetry.workersAdvice },
    credentials,
    requestRate,
    notReady: () => (draining ? "draining" : !writability.writable ? "storage-full" : undefined),
  });
  registerConfigRoute(app, { queues, jobs, schedules });
  const inFlight = watchInFlight(app.server);

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
  const unwatchEventLoop = telemetry.watchEventLoop();
  // Job upkeep (expired leases, timeouts, pruning) and webhook delivery, resuming pending ones.
  // An account's jobs are signed with its own secret when the credentials give it one (as last reloaded).
  const accountWebhookSecret = (account: string): string | undefined => credentials.current()?.accounts.get(account === "" ? config.accountId : account)?.webhookSecret?.reveal();
  const jobsBackground = startJobsBackground({
    jobs,
    schedules,
    batches,
    clock,
    webhookSecret,
    accountWebhookSecret,
    webhookPolicy,
    onError: logUnexpected,
    onWebhookAttempt: telemetry.onWebhookAttempt,
  });
  const blobSweeper = startBlobSweeper({ blobs, clock, onError: logUnexpected });
  // Resumes message move tasks (DLQ redrives) a restart interrupted.
  await queues.moveTasks.runner.start();
  const url = `http://${urlHost(config.host)}:${port}`;
  // The line scripts and tests wait for: its message carries the address actually bound.
  const dataDir = config.store === "sqlite" ? resolve(config.dataDir) : undefined;
  logger.info({ version: packageVersion(), store: config.store, dataDir, address: url, durability: durabilityOf(config) }, `Sluice listening on ${url}`);

  let closing: Promise<void> | undefined;
  async function close(drainSeconds: number): Promise<void> {
    const startedAtMs = Date.now();
    if (drainSeconds > 0) {
      // Load balancers see /readyz fail and move away while everything they still send is served.
      draining = true;
      logger.info({ drainSeconds }, "shutting down: draining (/readyz answers 503, requests are still served)");
      await new Promise((resolve) => setTimeout(resolve, drainSeconds * 1000));
    }
    const longPollsEnded = queues.waiters.waiterCount();
    // Long polls first: they would otherwise hold app.close() for up to 20 s.
    shutdown.abort();
    credentials.close();
    queues.waiters.closeAll();
    logger.info({ longPollsEnded }, "shutting down: refusing new requests, answering those in flight");
    const connections = new Promise<number>((res) => app.server.getConnections((err, n) => res(err ? 0 : n)));
    jobs.close();
    unfollowJobs();
    await maintenance.stop();
    writability.close();
    unwatchEventLoop();
    await jobsBackground.stop();
    await blobSweeper.stop();
    blobStorage.close?.();
    await queues.moveTasks.runner.stop();
    // Listening still: a request arriving while those in flight finish gets 503, not a refused connection.
    const graceEndsMs = Date.now() + closeGraceMs;
    await inFlight.settled(closeGraceMs);
    // app.close() waits for in-flight requests; a client that never lets go must not hold it forever.
    const forceClose = setTimeout(() => app.server.closeAllConnections(), Math.max(0, graceEndsMs - Date.now()));
    forceClose.unref();
    try {
      await app.close();
    } finally {
      clearTimeout(forceClose);
    }
    try {
      await store.close();
    } finally {
      lock?.release();
    }
    await tracer?.shutdown().catch(logUnexpected); // the last spans are sent before the process ends
    const connectionsOpen = await connections;
    logger.info({ connectionsOpen, longPollsEnded, durationMs: Date.now() - startedAtMs }, "shut down: requests answered, store closed");
  }

  return {
    url,
    port,
    app,
    queues,
    jobs,
    credentials,
    declaredConfig,
    logger,
    close: (options) => (closing ??= close(options?.drainSeconds ?? 0)),
  };
}

/** The flags' (and environment's) quotas for the server's own account. */
function quotaDefaultsOf(config: ServerConfig): AccountQuotas {
  const out: AccountQuotas = {};
  for (const key of quotaNames) if (config[key] !== undefined) out[key] = config[key];
  return out;
}
