/**
 * The environment variables that mirror `sluice serve`'s flags, apart from config.ts so that the
 * CLI's help can name them without loading the server.
 */
/** Environment variables that mirror the flags. */
export const envVarNames = {
  host: "SLUICE_HOST",
  port: "SLUICE_PORT",
  dataDir: "SLUICE_DATA_DIR",
  store: "SLUICE_STORE",
  postgresUrl: "SLUICE_POSTGRES_URL",
  postgresListenUrl: "SLUICE_POSTGRES_LISTEN_URL",
  postgresPoolSize: "SLUICE_POSTGRES_POOL_SIZE",
  accountId: "SLUICE_ACCOUNT_ID",
  region: "SLUICE_REGION",
  webhookSecret: "SLUICE_WEBHOOK_SECRET",
  webhookAllowPrivate: "SLUICE_WEBHOOK_ALLOW_PRIVATE",
  idempotencyKeyTtlSeconds: "SLUICE_IDEMPOTENCY_KEY_TTL_SECONDS",
  eventRetentionSeconds: "SLUICE_EVENT_RETENTION_SECONDS",
  allowAnonymous: "SLUICE_ALLOW_ANONYMOUS",
  credentialsFile: "SLUICE_CREDENTIALS_FILE",
  configFile: "SLUICE_CONFIG",
  accessKeyId: "SLUICE_ACCESS_KEY_ID",
  secretAccessKey: "SLUICE_SECRET_ACCESS_KEY",
  apiToken: "SLUICE_API_TOKEN",
  logLevel: "SLUICE_LOG_LEVEL",
  blobStore: "SLUICE_BLOB_STORE",
  blobBucket: "SLUICE_BLOB_BUCKET",
  blobEndpoint: "SLUICE_BLOB_ENDPOINT",
  blobRegion: "SLUICE_BLOB_REGION",
  blobPathStyle: "SLUICE_BLOB_PATH_STYLE",
  metricsQueueLimit: "SLUICE_METRICS_QUEUE_LIMIT",
  shutdownDrainSeconds: "SLUICE_SHUTDOWN_DRAIN_SECONDS",
  maxQueues: "SLUICE_MAX_QUEUES",
  maxMessagesPerQueue: "SLUICE_MAX_MESSAGES_PER_QUEUE",
  maxBytesPerQueue: "SLUICE_MAX_BYTES_PER_QUEUE",
  requestsPerSecond: "SLUICE_REQUESTS_PER_SECOND",
  maxBlobBytes: "SLUICE_MAX_BLOB_BYTES",
} as const;
