/**
 * POST /v1/backup (admin scope): a consistent copy of the live database, taken with the store's
 * online backup while traffic continues, answered as the file itself (application/vnd.sqlite3).
 * The copy is written beside the database first (same file system, so there is room for what
 * the database needs), streamed, then removed. `sluice backup <file>` calls it.
 */
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { SluiceError } from "../core/index.js";
import type { Logger } from "./logger.js";

/** Writes a consistent copy of the database to `destination`. */
export type BackupFn = (destination: string) => Promise<unknown>;

export function registerBackupRoute(app: FastifyInstance, p: { backup: BackupFn | undefined; dataDir: string; logger: Logger }): void {
  app.post("/v1/backup", { config: { scope: "admin" } }, async (_request, reply) => {
    if (!p.backup) throw new SluiceError("UnsupportedOperation", "This store is backed up with its database's own tools: for PostgreSQL, pg_dump or your provider's snapshots.");
    const file = join(p.dataDir, `.backup-${randomUUID()}.db`);
    const startedAtMs = Date.now();
    try {
      await p.backup(file);
    } catch (err) {
      await unlink(file).catch(() => undefined);
      throw err;
    }
    const { size } = await stat(file);
    p.logger.info({ bytes: size, durationMs: Date.now() - startedAtMs }, "backup taken");
    const stream = createReadStream(file);
    // Removed once the answer is sent or the client left; the open stream keeps the data readable until then.
    reply.raw.once("close", () => void unlink(file).catch(() => undefined));
    return reply
      .type("application/vnd.sqlite3")
      .header("content-length", size)
      .header("content-disposition", 'attachment; filename="sluice-backup.db"')
      .send(stream);
  });
}
