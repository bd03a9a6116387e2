/**
 * Opening the PostgreSQL store: connect (retrying with backoff while the database is unreachable,
 * then failing with the reason), apply migrations, and hand back a store. The composition root
 * calls this; nothing else needs to know how.
 */
import { Db, isConnectionError } from "./db.js";
import { migrate } from "./migrate.js";
import { PostgresNotifier } from "./notifier.js";
import { PostgresStore } from "./postgres-store.js";

export interface PostgresStoreOptions {
  url: string;
  /** The listening connection's database, when not `url` (requests through a transaction-mode PgBouncer). */
  listenUrl?: string;
  /** Connections this node may hold (requests share them; see docs/multi-node.md for budgets). */
  poolSize: number;
  /** How long to keep trying to reach the database at start before giving up. */
  connectTimeoutMs?: number;
  /** Errors of idle connections (a database restart): reported, the pool replaces them. */
  onError?: (err: unknown) => void;
  /** Told of each failed attempt to reach the database at start (to log it). */
  onRetry?: (attempt: number, err: unknown, delayMs: number) => void;
  nowMs?: () => number;
}

export class DatabaseUnreachableError extends Error {
  override readonly name = "DatabaseUnreachableError";
}

const firstDelayMs = 250;
const maxDelayMs = 5_000;

/** `postgres://user@host:port/db`, without a password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ""}${u.host}${u.pathname}`;
  } catch {
    return "(an unparsable PostgreSQL URL)";
  }
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  // A separate listening URL means requests go through a transaction-mode pool: no prepared statements then.
  const db = new Db({ url: options.url, poolSize: options.poolSize, onError: options.onError, prepare: options.listenUrl === undefined });
  const deadline = Date.now() + (options.connectTimeoutMs ?? 30_000);
  try {
    for (let attempt = 1, delayMs = firstDelayMs; ; attempt++, delayMs = Math.min(maxDelayMs, delayMs * 2)) {
      try {
        await db.pool.query("SELECT 1");
        break;
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause ?? err;
        const retry = isConnectionError(err) || isConnectionError(cause);
        const reason = err instanceof Error ? err.message : String(err);
        // Not a connection problem (a wrong database, user or password): waiting would not help.
        if (!retry) throw new DatabaseUnreachableError(`PostgreSQL at ${describeUrl(options.url)} refused the connection: ${reason}`);
        if (Date.now() + delayMs > deadline) throw new DatabaseUnreachableError(`Cannot reach PostgreSQL at ${describeUrl(options.url)} (gave up after ${attempt} attempts): ${reason}`);
        options.onRetry?.(attempt, err, delayMs);
        await new Promise((r) => setTimeout(r, delayMs));
      }
    }
    await migrate(db, (options.nowMs ?? Date.now)());
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  // One listening connection per node, opened before it serves: its waiters hear other nodes from the start.
  const listenUrl = options.listenUrl ?? options.url;
  const notifier = new PostgresNotifier(db, { url: listenUrl, onError: options.onError });
  try {
    await notifier.start();
  } catch (err) {
    await db.close().catch(() => undefined);
    throw new DatabaseUnreachableError(`PostgreSQL at ${describeUrl(listenUrl)} refused the listening connection: ${err instanceof Error ? err.message : String(err)}`);
  }
  return new PostgresStore(db, notifier);
}
