/**
 * What every SqliteStore handle open on one database file in this process shares: the notifier
 * (a notice published through one handle reaches the subscribers of all of them) and which
 * queues keep running counts (a count row made through one handle is moved by all). Only one process may
 * serve a data directory (src/server's lock), so in-process is everywhere the file is written.
 */
import { resolve } from "node:path";
import { InProcessNotifier } from "../../core/notifier.js";

export interface SharedFile {
  readonly notifier: InProcessNotifier;
  /** Queues with running-count rows (running-counts.ts): every handle's job writes move them. */
  readonly countedQueues: Set<number>;
}

const byPath = new Map<string, { shared: SharedFile; handles: number }>();

/** The file's shared state, made by its first handle. ":memory:" databases are each their own. */
export function attachSharedFile(filename: string): SharedFile {
  if (filename === ":memory:") return fresh();
  const path = resolve(filename);
  let entry = byPath.get(path);
  if (!entry) byPath.set(path, (entry = { shared: fresh(), handles: 0 }));
  entry.handles++;
  return entry.shared;
}

function fresh(): SharedFile {
  return { notifier: new InProcessNotifier(), countedQueues: new Set() };
}

/** A handle closed; the last one forgets the file's state. */
export function detachSharedFile(filename: string): void {
  if (filename === ":memory:") return;
  const path = resolve(filename);
  const entry = byPath.get(path);
  if (entry && --entry.handles === 0) byPath.delete(path);
}
