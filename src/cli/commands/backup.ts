/**
 * `sluice backup <file>`: asks the server for a consistent copy of its live database (POST
 * /v1/backup, admin scope; SQLite's online backup, taken while traffic continues) and writes it
 * to <file> — through a temporary name beside it, renamed once complete, so <file> is never a
 * partial copy. Restoring is docs/operations.md's "Backup and restore".
 */
import { createWriteStream } from "node:fs";
import { rename, stat, unlink } from "node:fs/promises";
import { resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Command } from "commander";
import { adminRequest } from "./admin-http.js";
import { type OutputFlags, formatBytes, printJson, wantsJson } from "./output.js";
import { action, adminCommand } from "./queues.js";
import { type ConnectionFlags, UsageError, connectionFromFlags } from "./sdk-connection.js";

interface BackupFlags extends ConnectionFlags, OutputFlags {
  force?: boolean;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function backup(file: string, flags: BackupFlags): Promise<void> {
  const target = resolve(file);
  if (!flags.force && (await exists(target))) throw new UsageError(`${target} exists; pass --force to replace it`);
  const conn = connectionFromFlags(flags, process.env, false);
  const startedAtMs = Date.now();
  const res = await adminRequest(conn, "POST", "/v1/backup");
  const partial = `${target}.partial-${process.pid}`;
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), createWriteStream(partial, { flags: "wx" }));
    const { size } = await stat(partial);
    const expected = Number(res.headers.get("content-length"));
    if (Number.isFinite(expected) && size !== expected) throw new Error(`the backup was cut short: ${size} of ${expected} bytes arrived`);
    await rename(partial, target);
    const summary = { file: target, bytes: size, durationMs: Date.now() - startedAtMs };
    if (wantsJson(flags)) printJson(summary);
    else console.log(`Backed up ${formatBytes(size)} to ${target} in ${(summary.durationMs / 1000).toFixed(1)} s`);
  } catch (err) {
    await unlink(partial).catch(() => undefined);
    throw err;
  }
}

export function registerBackupCommand(program: Command): void {
  // A backup is the whole server's (every account's): no --account; SLUICE_ACCOUNT is not sent.
  adminCommand(program, "backup", "Copy the server's live database to <file> (a consistent SQLite copy, taken while traffic continues; admin scope).", false)
    .argument("<file>", "where to write the copy")
    .option("--force", "replace <file> if it exists")
    .action(action(backup));
}
