/**
 * Server configuration: the defaults below, then environment variables, then flags (later
 * layers win). Validated in one place, with errors a person can act on.
 */
import { limits, quotaNames } from "../core/index.js";
import { Secret } from "../protocols/auth/principal.js";
import { webhookSecretProblem } from "../protocols/jobs/webhooks/signer.js";
import { secretMinLength } from "./credentials-file.js";
import { envVarNames } from "./env-var-names.js";
import { type LogLevel, isLogLevel, logLevels } from "./logger.js";

export type StoreKind = "sqlite" | "postgres";
export type BlobStoreKind = "fs" | "s3";

export interface ServerConfig {
  host: string;
  /** 0 picks a free port. */
  port: number;
  dataDir: string;
  store: StoreKind;
  postgresUrl?: string;
  /**
   * Where this node's listening connection (LISTEN/NOTIFY) goes, when not to postgresUrl: PostgreSQL
   * itself while requests go through a transaction-pooling PgBouncer (docs/multi-node.md).
   */
  postgresListenUrl?: string;
  /** Connections one node may hold to PostgreSQL (docs/multi-node.md: connection budgets). */
  postgresPoolSize: number;
  accountId: string;
  region: string;
  /** `whsec_…`: signs job webhooks. */
  webhookSecret?: string;
  /** Let job webhooks target loopback/private addresses (off: SSRF protection). */
  webhookAllowPrivate: boolean;
  /** How long a jobs API Idempotency-Key is remembered. */
  idempotencyKeyTtlSeconds: number;
  /** How long the durable job event log keeps events (GET /v1/events resumes within it). */
  eventRetentionSeconds: number;
  /** Serve anonymous requests on a non-loopback bind when no credentials are configured. */
  allowAnonymous: boolean;
  /** TOML/JSON/YAML file of access keys, tokens and accounts (docs/security.md); reloaded on SIGHUP. */
  credentialsFile?: string;
  /** The declarative config (YAML/TOML/JSON queues and schedules): applied at start and on SIGHUP. */
  configFile?: string;
  /** The single-key case from the environment: SLUICE_ACCESS_KEY_ID / SLUICE_SECRET_ACCESS_KEY. */
  accessKeyId?: string;
  secretAccessKey?: Secret;
  /** The single-token case: a bearer token with every scope, for the default account. */
  apiToken?: Secret;
  /** Where attachments' bytes live: files under the data dir (served by this server), or an S3 bucket (many nodes). */
  blobStore: BlobStoreKind;
  blobBucket?: string;
  /** An S3-compatible endpoint (absent: AWS's); path-style addressing for servers that want it. */
  blobEndpoint?: string;
  blobRegion: string;
  blobPathStyle: boolean;
  /** pino level: info logs start, shutdown and background events; debug adds a line per request. */
  logLevel: LogLevel;
  /** Queues with their own label in /metrics; those past it are summed under queue="(other)". */
  metricsQueueLimit: number;
  /** After SIGTERM, how long /readyz answers 503 while requests are still served (load balancers move away). */
  shutdownDrainSeconds: number;
  /** The server's own account's quotas (docs/security.md, "Quotas"); other accounts' are in the credentials file. */
  maxQueues?: number;
  maxMessagesPerQueue?: number;
  maxBytesPerQueue?: number;
  requestsPerSecond?: number;
  maxBlobBytes?: number;
}

export const defaultServerConfig: ServerConfig = {
  host: "127.0.0.1",
  port: 9324,
  dataDir: "./data",
  store: "sqlite",
  postgresPoolSize: 10,
  accountId: "000000000000",
  region: "us-east-1",
  webhookAllowPrivate: false,
  idempotencyKeyTtlSeconds: 86_400,
  eventRetentionSeconds: 86_400,
  allowAnonymous: false,
  logLevel: "info",
  blobStore: "fs",
  blobRegion: "us-east-1",
  blobPathStyle: false,
  metricsQueueLimit: 1000,
  shutdownDrainSeconds: 5,
};

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** The variable of the retired `--store-thread`: set to a true value, it stops the start (storeThreadRetired). */
export const retiredStoreThreadEnv = "SLUICE_STORE_THREAD";

/** SQLite on a worker thread of its own was removed: measured slower, it behaved differently, and nobody should believe it still runs. */
export function storeThreadRetired(source: string): ConfigError {
  return new ConfigError(
    `${source} was removed: SQLite now always runs on the event loop with its WAL syncs off it, which measured faster than the store thread (docs/benchmarks.md). Remove ${source}.`,
  );
}

export { envVarNames };
// Every setting has its variable (env-var-names.ts can't name the type: it would import this module).
envVarNames satisfies Record<keyof ServerConfig, string>;

export function parsePort(text: string, source: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) throw new ConfigError(`${source}: port must be an integer from 0 to 65535, got "${text}".`);
  return Number(text);
}

export function parseSeconds(text: string, source: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new ConfigError(`${source}: expected a whole number of seconds, got "${text}".`);
  return Number(text);
}

export function parseBooleanText(text: string, source: string): boolean {
  const lower = text.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(lower)) return true;
  if (["0", "false", "no", "off", ""].includes(lower)) return false;
  throw new ConfigError(`${source}: expected true or false, got "${text}".`);
}

/** Connections per node: at least 2 (a request and the background work), at most 1000. */
export function parsePoolSize(text: string, source: string): number {
  if (!/^\d{1,4}$/.test(text) || Number(text) < 2 || Number(text) > 1000) throw new ConfigError(`${source}: pool size must be an integer from 2 to 1000, got "${text}".`);
  return Number(text);
}

export function parseStore(text: string, source: string): StoreKind {
  if (text !== "sqlite" && text !== "postgres") throw new ConfigError(`${source}: store must be sqlite or postgres, got "${text}".`);
  return text;
}

/** Bounds the metrics' label cardinality: each labelled queue is a few dozen series. */
const metricsQueueLimitMax = 100_000;

export function parseMetricsQueueLimit(text: string, source: string): number {
  if (!/^\d{1,6}$/.test(text) || Number(text) > metricsQueueLimitMax) throw new ConfigError(`${source}: expected a whole number of queues from 0 to ${metricsQueueLimitMax}, got "${text}".`);
  return Number(text);
}

/** A quota: a whole number from 1 (0 would refuse everything; leave the quota out for none). */
export function parseQuota(text: string, source: string): number {
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) throw new ConfigError(`${source}: expected a whole number of at least 1, got "${text}".`);
  return Number(text);
}

export function parseLogLevel(text: string, source: string): LogLevel {
  if (!isLogLevel(text)) throw new ConfigError(`${source}: log level must be one of ${logLevels.join(", ")}, got "${text}".`);
  return text;
}

/** The configuration layer given by environment variables. */
export function configFromEnv(env: NodeJS.ProcessEnv): Partial<ServerConfig> {
  const out: Partial<ServerConfig> = {};
  const get = (key: keyof ServerConfig): string | undefined => {
    const v = env[envVarNames[key]];
    return v === undefined || v === "" ? undefined : v;
  };
  const host = get("host");
  if (host !== undefined) out.host = host;
  const port = get("port");
  if (port !== undefined) out.port = parsePort(port, envVarNames.port);
  const dataDir = get("dataDir");
  if (dataDir !== undefined) out.dataDir = dataDir;
  const store = get("store");
  if (store !== undefined) out.store = parseStore(store, envVarNames.store);
  const postgresUrl = get("postgresUrl");
  if (postgresUrl !== undefined) out.postgresUrl = postgresUrl;
  const postgresListenUrl = get("postgresListenUrl");
  if (postgresListenUrl !== undefined) out.postgresListenUrl = postgresListenUrl;
  const postgresPoolSize = get("postgresPoolSize");
  if (postgresPoolSize !== undefined) out.postgresPoolSize = parsePoolSize(postgresPoolSize, envVarNames.postgresPoolSize);
  const accountId = get("accountId");
  if (accountId !== undefined) out.accountId = accountId;
  const region = get("region");
  if (region !== undefined) out.region = region;
  const webhookSecret = get("webhookSecret");
  if (webhookSecret !== undefined) out.webhookSecret = webhookSecret;
  const webhookAllowPrivate = get("webhookAllowPrivate");
  if (webhookAllowPrivate !== undefined) out.webhookAllowPrivate = parseBooleanText(webhookAllowPrivate, envVarNames.webhookAllowPrivate);
  const idempotencyKeyTtl = get("idempotencyKeyTtlSeconds");
  if (idempotencyKeyTtl !== undefined) out.idempotencyKeyTtlSeconds = parseSeconds(idempotencyKeyTtl, envVarNames.idempotencyKeyTtlSeconds);
  const eventRetention = get("eventRetentionSeconds");
  if (eventRetention !== undefined) out.eventRetentionSeconds = parseSeconds(eventRetention, envVarNames.eventRetentionSeconds);
  const allowAnonymous = get("allowAnonymous");
  if (allowAnonymous !== undefined) out.allowAnonymous = parseBooleanText(allowAnonymous, envVarNames.allowAnonymous);
  const storeThread = env[retiredStoreThreadEnv];
  if (storeThread !== undefined && storeThread !== "" && parseBooleanText(storeThread, retiredStoreThreadEnv)) throw storeThreadRetired(retiredStoreThreadEnv);
  const credentialsFile = get("credentialsFile");
  if (credentialsFile !== undefined) out.credentialsFile = credentialsFile;
  const configFile = get("configFile");
  if (configFile !== undefined) out.configFile = configFile;
  const accessKeyId = get("accessKeyId");
  if (accessKeyId !== undefined) out.accessKeyId = accessKeyId;
  const secretAccessKey = get("secretAccessKey");
  if (secretAccessKey !== undefined) out.secretAccessKey = new Secret(secretAccessKey);
  const apiToken = get("apiToken");
  if (apiToken !== undefined) out.apiToken = new Secret(apiToken);
  const logLevel = get("logLevel");
  if (logLevel !== undefined) out.logLevel = parseLogLevel(logLevel, envVarNames.logLevel);
  const blobStore = get("blobStore");
  if (blobStore !== undefined) out.blobStore = parseBlobStore(blobStore, envVarNames.blobStore);
  const blobBucket = get("blobBucket");
  if (blobBucket !== undefined) out.blobBucket = blobBucket;
  const blobEndpoint = get("blobEndpoint");
  if (blobEndpoint !== undefined) out.blobEndpoint = blobEndpoint;
  const blobRegion = get("blobRegion");
  if (blobRegion !== undefined) out.blobRegion = blobRegion;
  const blobPathStyle = get("blobPathStyle");
  if (blobPathStyle !== undefined) out.blobPathStyle = parseBooleanText(blobPathStyle, envVarNames.blobPathStyle);
  const metricsQueueLimit = get("metricsQueueLimit");
  if (metricsQueueLimit !== undefined) out.metricsQueueLimit = parseMetricsQueueLimit(metricsQueueLimit, envVarNames.metricsQueueLimit);
  const shutdownDrain = get("shutdownDrainSeconds");
  if (shutdownDrain !== undefined) out.shutdownDrainSeconds = parseSeconds(shutdownDrain, envVarNames.shutdownDrainSeconds);
  for (const key of quotaNames) {
    const quota = get(key);
    if (quota !== undefined) out[key] = parseQuota(quota, envVarNames[key]);
  }
  return out;
}

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1";
}

/** Merges layers over the defaults (undefined values don't override) and validates the result. */
export function resolveServerConfig(...layers: Array<Partial<ServerConfig> | undefined>): ServerConfig {
  const config: ServerConfig = { ...defaultServerConfig };
  const target = config as unknown as Record<string, unknown>;
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer)) {
      // Only configuration keys: callers may pass wider objects (startServer's clock and ids).
      if (value !== undefined && key in envVarNames) target[key] = value;
    }
  }
  validateServerConfig(config);
  return config;
}

/** Longer than any supervisor waits between SIGTERM and SIGKILL. */
const shutdownDrainMaxSeconds = 600;

export function validateServerConfig(config: ServerConfig): void {
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65_535) throw new ConfigError(`port must be an integer from 0 to 65535, got ${config.port}.`);
  if (config.host.length === 0) throw new ConfigError("host must not be empty.");
  if (!Number.isInteger(config.metricsQueueLimit) || config.metricsQueueLimit < 0 || config.metricsQueueLimit > metricsQueueLimitMax) {
    throw new ConfigError(`metrics queue limit must be a whole number from 0 to ${metricsQueueLimitMax}, got ${config.metricsQueueLimit}.`);
  }
  if (!Number.isInteger(config.shutdownDrainSeconds) || config.shutdownDrainSeconds < 0 || config.shutdownDrainSeconds > shutdownDrainMaxSeconds) {
    throw new ConfigError(`shutdown drain must be 0 to ${shutdownDrainMaxSeconds} seconds, got ${config.shutdownDrainSeconds}.`);
  }
  if (!isLogLevel(config.logLevel)) throw new ConfigError(`log level must be one of ${logLevels.join(", ")}, got "${String(config.logLevel)}".`);
  if (!/^\d{12}$/.test(config.accountId)) throw new ConfigError(`account id must be 12 digits, got "${config.accountId}".`);
  if (!/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/.test(config.region)) throw new ConfigError(`region must look like us-east-1, got "${config.region}".`);
  if (config.webhookSecret !== undefined) {
    const problem = webhookSecretProblem(config.webhookSecret);
    if (problem !== undefined) {
      throw new ConfigError(
        `--webhook-secret (${envVarNames.webhookSecret}) is not a usable Standard Webhooks secret: ${problem}. Generate one with: echo "whsec_$(openssl rand -base64 32)"`,
      );
    }
  }
  if (!Number.isInteger(config.idempotencyKeyTtlSeconds) || config.idempotencyKeyTtlSeconds < 60 || config.idempotencyKeyTtlSeconds > 30 * 86_400) {
    throw new ConfigError(`idempotency key TTL must be 60 to ${30 * 86_400} seconds, got ${config.idempotencyKeyTtlSeconds}.`);
  }
  const ev = limits.events;
  if (!Number.isInteger(config.eventRetentionSeconds) || config.eventRetentionSeconds < ev.retentionMinSeconds || config.eventRetentionSeconds > ev.retentionMaxSeconds) {
    throw new ConfigError(`event retention must be ${ev.retentionMinSeconds} to ${ev.retentionMaxSeconds} seconds, got ${config.eventRetentionSeconds}.`);
  }
  if (config.store === "postgres" && !config.postgresUrl) throw new ConfigError("--store postgres needs --postgres-url (or SLUICE_POSTGRES_URL).");
  if (config.store === "postgres" && !/^postgres(ql)?:\/\//.test(config.postgresUrl!)) {
    throw new ConfigError(`--postgres-url must be a postgres:// or postgresql:// connection string, got "${config.postgresUrl!.slice(0, 40)}".`);
  }
  if (config.postgresListenUrl !== undefined && !/^postgres(ql)?:\/\//.test(config.postgresListenUrl)) {
    throw new ConfigError(`--postgres-listen-url must be a postgres:// or postgresql:// connection string, got "${config.postgresListenUrl.slice(0, 40)}".`);
  }
  if (!Number.isInteger(config.postgresPoolSize) || config.postgresPoolSize < 2 || config.postgresPoolSize > 1000) {
    throw new ConfigError(`PostgreSQL pool size must be an integer from 2 to 1000, got ${config.postgresPoolSize}.`);
  }
  validateBlobStore(config);
  validateEnvCredentials(config);
  if (!isLoopbackHost(config.host) && !config.allowAnonymous && !hasCredentials(config)) {
    throw new ConfigError(
      `Refusing to serve anonymous requests on ${config.host}: no credentials are configured, so anyone who can reach this address could use every queue. Configure credentials (--credentials-file, or SLUICE_ACCESS_KEY_ID/SLUICE_SECRET_ACCESS_KEY, or SLUICE_API_TOKEN), bind to 127.0.0.1, or pass --allow-anonymous (SLUICE_ALLOW_ANONYMOUS=true) if that is what you want.`,
    );
  }
}

export function parseBlobStore(text: string, source: string): BlobStoreKind {
  if (text !== "fs" && text !== "s3") throw new ConfigError(`${source}: expected fs or s3, got "${text}".`);
  return text;
}

function validateBlobStore(config: ServerConfig): void {
  if (config.blobStore === "s3" && !config.blobBucket) throw new ConfigError("--blob-store s3 needs --blob-bucket (or SLUICE_BLOB_BUCKET).");
  if (config.blobStore === "fs" && (config.blobBucket !== undefined || config.blobEndpoint !== undefined)) {
    throw new ConfigError("--blob-bucket and --blob-endpoint are for --blob-store s3; the fs blob store keeps files under --data-dir.");
  }
  if (config.blobEndpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(config.blobEndpoint)) throw new ConfigError(`--blob-endpoint must be an http:// or https:// URL, got "${config.blobEndpoint.slice(0, 60)}".`);
  if (!/^[a-z0-9-]{1,40}$/.test(config.blobRegion)) throw new ConfigError(`--blob-region must look like us-east-1, got "${config.blobRegion}".`);
}

/** Whether any credentials are configured: then every request is authenticated, on every bind. */
export function hasCredentials(config: ServerConfig): boolean {
  return config.credentialsFile !== undefined || config.accessKeyId !== undefined || config.apiToken !== undefined;
}

function validateEnvCredentials(config: ServerConfig): void {
  if ((config.accessKeyId === undefined) !== (config.secretAccessKey === undefined)) {
    throw new ConfigError(`${envVarNames.accessKeyId} and ${envVarNames.secretAccessKey} go together: set both, or neither.`);
  }
  if (config.accessKeyId !== undefined && !/^[A-Za-z0-9_+=,.@-]{3,128}$/.test(config.accessKeyId)) {
    throw new ConfigError(`${envVarNames.accessKeyId} must be 3–128 characters of letters, digits and _+=,.@-.`);
  }
  for (const [name, secret] of [[envVarNames.secretAccessKey, config.secretAccessKey], [envVarNames.apiToken, config.apiToken]] as const) {
    const value = secret?.reveal();
    if (value !== undefined && (value.length < secretMinLength || /\s/.test(value))) {
      throw new ConfigError(`${name} must be at least ${secretMinLength} characters without spaces (e.g. from: openssl rand -hex 20).`);
    }
  }
}
