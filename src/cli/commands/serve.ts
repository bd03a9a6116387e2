/**
 * `sluice serve`: runs the server until SIGTERM/SIGINT, then shuts down gracefully and exits 0.
 * Logs one line when ready whose message is `Sluice listening on http://<host>:<port>` (a JSON
 * line, or a pretty one on a terminal), which scripts and tests wait for (with --port 0 it
 * carries the port actually bound).
 */
import { type Command, Option } from "commander";
import type * as ServerConfigModule from "../../server/config.js";
import type { ServerConfig } from "../../server/config.js";
import { envVarNames } from "../../server/env-var-names.js";
import type { RunningServer } from "../../server/index.js";
import { boundHeapGrowth } from "../heap-growth.js";

interface ServeFlags {
  host?: string;
  port?: string;
  dataDir?: string;
  store?: string;
  postgresUrl?: string;
  postgresListenUrl?: string;
  postgresPoolSize?: string;
  accountId?: string;
  region?: string;
  webhookSecret?: string;
  webhookAllowPrivate?: boolean;
  idempotencyKeyTtlSeconds?: string;
  eventRetentionSeconds?: string;
  allowAnonymous?: boolean;
  storeThread?: boolean;
  logLevel?: string;
  metricsQueueLimit?: string;
  blobStore?: string;
  blobBucket?: string;
  blobEndpoint?: string;
  blobRegion?: string;
  blobPathStyle?: boolean;
  credentialsFile?: string;
  config?: string;
  shutdownDrainSeconds?: string;
  maxQueues?: string;
  maxMessagesPerQueue?: string;
  maxBytesPerQueue?: string;
  requestsPerSecond?: string;
  maxBlobBytes?: string;
}

function configFromFlags(flags: ServeFlags, parse: typeof ServerConfigModule): Partial<ServerConfig> {
  const { parseBlobStore, parseLogLevel, parseMetricsQueueLimit, parsePoolSize, parsePort, parseQuota, parseSeconds, parseStore } = parse;
  if (flags.storeThread) throw parse.storeThreadRetired("--store-thread");
  return {
    host: flags.host,
    port: flags.port === undefined ? undefined : parsePort(flags.port, "--port"),
    dataDir: flags.dataDir,
    store: flags.store === undefined ? undefined : parseStore(flags.store, "--store"),
    postgresUrl: flags.postgresUrl,
    postgresListenUrl: flags.postgresListenUrl,
    postgresPoolSize: flags.postgresPoolSize === undefined ? undefined : parsePoolSize(flags.postgresPoolSize, "--postgres-pool-size"),
    accountId: flags.accountId,
    region: flags.region,
    webhookSecret: flags.webhookSecret,
    webhookAllowPrivate: flags.webhookAllowPrivate,
    idempotencyKeyTtlSeconds: flags.idempotencyKeyTtlSeconds === undefined ? undefined : parseSeconds(flags.idempotencyKeyTtlSeconds, "--idempotency-key-ttl-seconds"),
    eventRetentionSeconds: flags.eventRetentionSeconds === undefined ? undefined : parseSeconds(flags.eventRetentionSeconds, "--event-retention-seconds"),
    allowAnonymous: flags.allowAnonymous,
    logLevel: flags.logLevel === undefined ? undefined : parseLogLevel(flags.logLevel, "--log-level"),
    metricsQueueLimit: flags.metricsQueueLimit === undefined ? undefined : parseMetricsQueueLimit(flags.metricsQueueLimit, "--metrics-queue-limit"),
    blobStore: flags.blobStore === undefined ? undefined : parseBlobStore(flags.blobStore, "--blob-store"),
    blobBucket: flags.blobBucket,
    blobEndpoint: flags.blobEndpoint,
    blobRegion: flags.blobRegion,
    blobPathStyle: flags.blobPathStyle,
    credentialsFile: flags.credentialsFile,
    configFile: flags.config,
    shutdownDrainSeconds: flags.shutdownDrainSeconds === undefined ? undefined : parseSeconds(flags.shutdownDrainSeconds, "--shutdown-drain-seconds"),
    maxQueues: flags.maxQueues === undefined ? undefined : parseQuota(flags.maxQueues, "--max-queues"),
    maxMessagesPerQueue: flags.maxMessagesPerQueue === undefined ? undefined : parseQuota(flags.maxMessagesPerQueue, "--max-messages-per-queue"),
    maxBytesPerQueue: flags.maxBytesPerQueue === undefined ? undefined : parseQuota(flags.maxBytesPerQueue, "--max-bytes-per-queue"),
    requestsPerSecond: flags.requestsPerSecond === undefined ? undefined : parseQuota(flags.requestsPerSecond, "--requests-per-second"),
    maxBlobBytes: flags.maxBlobBytes === undefined ? undefined : parseQuota(flags.maxBlobBytes, "--max-blob-bytes"),
  };
}

const envHelp = `
Environment variables (flags win over them):
${Object.values(envVarNames)
  .map((name) => `  ${name}`)
  .join("\n")}`;

/** Closes on the first SIGTERM/SIGINT (after the drain period); a second one exits at once. */
function closeOnSignals(server: RunningServer, drainSeconds: number): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      server.logger.warn({ signal }, "signal received again: exiting without waiting");
      process.exit(1);
    }
    closing = true;
    server.logger.info({ signal }, "signal received");
    server.close({ drainSeconds }).then(
      () => process.exit(0),
      (err: unknown) => {
        server.logger.error({ err }, "error while shutting down");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // SIGHUP reloads the credentials file and applies the config file again (and never stops the
  // server, as it would by default).
  process.on("SIGHUP", () => {
    void server.credentials.reload();
    void server.declaredConfig.reload();
  });
}

async function serve(flags: ServeFlags): Promise<void> {
  boundHeapGrowth();
  // The server's modules load only for serve: the other commands start without them.
  const configModule = await import("../../server/config.js");
  const { ConfigError, StoreOpenError, startServer } = await import("../../server/index.js");
  let server: RunningServer;
  let config: ServerConfig;
  try {
    config = configModule.resolveServerConfig(configModule.configFromEnv(process.env), configFromFlags(flags, configModule));
    server = await startServer(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`sluice: ${err.message}`);
      process.exit(2);
    }
    if (err instanceof StoreOpenError) {
      console.error(`sluice: ${err.message}`);
      process.exit(1);
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      console.error(`sluice: cannot listen: ${(err as Error).message}`);
      process.exit(1);
    }
    throw err;
  }
  closeOnSignals(server, config.shutdownDrainSeconds);
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("Run the server: SQS API, jobs API and health endpoints on one port.")
    .option("--host <host>", "address to bind (default 127.0.0.1)")
    .option("--port <port>", "port to listen on, 0 for any free port (default 9324)")
    .option("--data-dir <dir>", "where the SQLite database lives (default ./data)")
    .option("--store <kind>", "sqlite or postgres (default sqlite)")
    .option("--postgres-url <url>", "PostgreSQL connection string for --store postgres")
    .option("--postgres-listen-url <url>", "where the node listens for other nodes' notices, if not --postgres-url (PgBouncer: PostgreSQL itself)")
    .option("--postgres-pool-size <n>", "connections this node may hold to PostgreSQL (default 10)")
    .option("--account-id <id>", "12-digit account id in queue URLs and ARNs (default 000000000000)")
    .option("--region <region>", "region in queue ARNs (default us-east-1)")
    .option("--webhook-secret <secret>", "whsec_… secret that signs job webhooks")
    .option("--webhook-allow-private", "let job webhooks target loopback and private addresses (off: SSRF protection)")
    .option("--idempotency-key-ttl-seconds <n>", "how long a jobs API Idempotency-Key is remembered (default 86400)")
    .option("--event-retention-seconds <n>", "how long the job event log keeps events for GET /v1/events to resume from (default 86400)")
    .option("--allow-anonymous", "serve anonymous requests on a non-loopback address (when no credentials are configured)")
    .option("--credentials-file <path>", "TOML, JSON or YAML file of access keys, bearer tokens and accounts; reloaded on SIGHUP and on change")
    .option("--config <file>", "YAML, TOML or JSON file declaring queues and schedules; applied at start and on SIGHUP (check one: sluice config check FILE)")
    // Retired: still parsed, so that passing it says why it is gone instead of "unknown option".
    .addOption(new Option("--store-thread").hideHelp())
    .option("--log-level <level>", "fatal, error, warn, info, debug (a line per request), trace or silent (default info)")
    .option("--metrics-queue-limit <n>", "queues with their own label in /metrics; the rest are summed under queue=\"(other)\" (default 1000)")
    .option("--blob-store <kind>", "where attachments' bytes live: fs (files under --data-dir, default) or s3 (a bucket every node reaches)")
    .option("--blob-bucket <name>", "the S3 bucket of --blob-store s3")
    .option("--blob-endpoint <url>", "an S3-compatible endpoint for --blob-store s3 (default: AWS's)")
    .option("--blob-region <region>", "the bucket's region (default us-east-1); credentials come from the AWS default chain")
    .option("--blob-path-style", "address the bucket in the URL path (most S3-compatible servers want it)")
    .option("--shutdown-drain-seconds <n>", "after SIGTERM, how long /readyz answers 503 while requests are still served (default 5)")
    .option("--max-queues <n>", "quota of the server's own account: queues it may have (other accounts: the credentials file)")
    .option("--max-messages-per-queue <n>", "quota of the server's own account: messages each queue may hold")
    .option("--max-bytes-per-queue <n>", "quota of the server's own account: bytes of message bodies each queue may hold")
    .option("--requests-per-second <n>", "quota of the server's own account: requests a second, per node")
    .option("--max-blob-bytes <n>", "quota of the server's own account: bytes of attachments it may store")
    .addHelpText("after", envHelp)
    .action(serve);
}
