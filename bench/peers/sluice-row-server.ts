/**
 * What every Sluice row does alike around its phases: start the server the context asks for (work
 * tree, a clean snapshot of `--server-rev`, or `--server-dir`), report which code it measured, and
 * explain a failure by what the server logged.
 */
import type { PhaseResult } from "../phase.js";
import type { RowContext, RowResult } from "../row.js";
import { startSluiceServer } from "./sluice-server.js";
import type { SluiceServer } from "./sluice-server.js";
import { snapshotRevision } from "./snapshot.js";

export interface RowServer {
  server: SluiceServer;
  /** For RowResult.version; undefined when the server runs from the work tree. */
  version: string | undefined;
  /** Stops the server and removes the snapshot, if any. */
  stop(): Promise<void>;
}

export async function startRowServer(ctx: RowContext, tag: string, serveArgs: string[] = []): Promise<RowServer> {
  const snapshot = ctx.serverRev === undefined ? undefined : snapshotRevision(ctx.repoRoot, ctx.serverRev);
  if (snapshot !== undefined) ctx.log(`${tag}: server from a clean snapshot of ${snapshot.commit}`);
  let server;
  try {
    server = await startSluiceServer({ repoRoot: snapshot?.dir ?? ctx.serverDir ?? ctx.repoRoot, entry: ctx.serverEntry, serveArgs, ...(ctx.cpuProfDir === undefined ? {} : { cpuProfDir: ctx.cpuProfDir }) });
  } catch (err) {
    snapshot?.remove();
    throw err;
  }
  ctx.log(`${tag}: server pid ${server.pid} at ${server.url}`);
  let version: string | undefined;
  if (snapshot !== undefined) version = `sluice ${snapshot.commit} (clean snapshot)`;
  if (ctx.serverDir !== undefined) version = `sluice from ${ctx.serverDir}`;
  return {
    server,
    version,
    async stop() {
      await server.stop();
      snapshot?.remove();
    },
  };
}

/** Adds the optional fields (code measured, paced phase, server RSS) to a row's result. */
export function completeResult(result: RowResult, rs: RowServer, paced: PhaseResult | undefined, rssMiB: number | undefined): RowResult {
  if (rs.version !== undefined) result.version = rs.version;
  if (paced !== undefined) result.paced = paced;
  if (rssMiB !== undefined) result.serverRssMiB = rssMiB;
  return result;
}

/** A server-side failure (HTTP 500) is explained by what the server logged, not by our stack. */
export function withServerOutput(err: unknown, rs: RowServer): Error {
  return new Error(`${err instanceof Error ? err.message : String(err)}\n--- server output (tail) ---\n${rs.server.output()}`, { cause: err });
}
