/**
 * The connection pool and the one way statements run: `query` for a single statement (its own
 * transaction), `transaction` for several. Deadlocks and serialization failures are retried (the
 * whole transaction runs again); a database that can't be reached is ServiceUnavailable, so
 * requests get a 503 and the node recovers by itself when the database is back.
 */
import pg from "pg";
import { SluiceError } from "../../core/errors.js";

/** bigint columns (epoch ms, seqs, ids) as numbers: every value stays below 2^53. */
const int8Oid = 20;
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === int8Oid ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format ?? "text"))) as typeof pg.types.getTypeParser,
};

/**
 * A statement run on every request (receive, send, delete): PostgreSQL parses and plans it once
 * per connection instead of on every call, when the Db prepares statements. Its text names its
 * columns (no `*`), so a column another node's newer migration adds can't change its result.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

export type Sql = string | NamedStatement;

export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: Sql, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** SQLSTATEs after which running the whole transaction again is correct. */
const retryable = new Set(["40001", "40P01"]);
const maxAttempts = 5;

/** Errors that mean "no usable connection", not "this statement is wrong". */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  if (/^(08|57P0[1-3]|53300)/.test(code)) return true;
  if (["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(code)) return true;
  const message = typeof e.message === "string" ? e.message : "";
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(message);
}

/** What a request is answered when the database can't be reached: a 503 the client may retry. */
export function unavailable(err: unknown): SluiceError {
  const reason = err instanceof Error ? err.message : String(err);
  return new SluiceError("ServiceUnavailable", `The database is unreachable (${reason}); the request may not have been carried out. Retry it.`);
}

export interface DbOptions {
  url: string;
  poolSize: number;
  /** How long a request waits for a free connection before failing. */
  connectTimeoutMs?: number;
  /**
   * Keep NamedStatements prepared on each connection. Not through a pool in transaction mode
   * (PgBouncer before 1.21 doesn't carry prepared statements between server connections).
   */
  prepare?: boolean;
  onError?: (err: unknown) => void;
}

export class Db implements Queryable {
  readonly pool: pg.Pool;

  constructor(readonly options: DbOptions) {
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      types,
    });
    // An idle connection that breaks (the database restarted) is dropped by the pool; without a
    // listener the error would end the process.
    this.pool.on("error", (err) => options.onError?.(err));
  }

  private config(sql: Sql, values: unknown[] | undefined): pg.QueryConfig {
    if (typeof sql === "string") return { text: sql, values };
    return this.options.prepare === true ? { name: sql.name, text: sql.text, values } : { text: sql.text, values };
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: Sql, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(this.config(sql, values));
    } catch (err) {
      throw isConnectionError(err) ? unavailable(err) : err;
    }
  }

  /** Runs `fn` in one transaction (READ COMMITTED), again from the start after a deadlock. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw isConnectionError(err) ? unavailable(err) : err;
      }
      let broken = false;
      try {
        await client.query("BEGIN");
        const tx: Queryable = { query: <R extends pg.QueryResultRow>(sql: Sql, values?: unknown[]) => client.query<R>(this.config(sql, values)) };
        const result = await fn(tx);
        await client.query("COMMIT");
        return result;
      } catch (err) {
        broken = isConnectionError(err);
        if (!broken) await client.query("ROLLBACK").catch(() => (broken = true));
        if (broken) throw unavailable(err);
        const code = (err as { code?: string }).code;
        if (code !== undefined && retryable.has(code) && attempt < maxAttempts) continue;
        throw err;
      } finally {
        client.release(broken);
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
