/**
 * A full disk is an answer, not a crash: every store call that fails for want of space becomes
 * StorageFull (503, retried by clients; nothing was written), the server turns not-ready and says
 * so once, and a periodic probe write notices when space is back (reads go on throughout).
 */
import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { SluiceError } from "../core/index.js";
import type { Logger } from "./logger.js";

export interface StoreWritabilityOptions {
  logger: Logger;
  /** Whether a store error means its disk is full (the store's own classifier). */
  isDiskFull: (err: unknown) => boolean;
  /** A small write where the store writes; rejects while the disk is still full. */
  probe: () => Promise<void>;
  /** How often the probe runs while writes fail. */
  probeIntervalMs: number;
  /** Told of every change (sluice_store_writable). */
  onChange?: (writable: boolean) => void;
}

export class StoreWritability {
  writable = true;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(private readonly o: StoreWritabilityOptions) {}

  /** The StorageFull error for `err` if it means a full disk (and the state turns unwritable), else undefined. */
  storageFull(err: unknown): SluiceError | undefined {
    if (err instanceof SluiceError ? err.code !== "StorageFull" : !this.o.isDiskFull(err)) return undefined;
    if (this.writable) {
      this.writable = false;
      this.o.onChange?.(false);
      const reason = err instanceof Error ? err.message : String(err);
      this.o.logger.error({ reason }, "store not writable: the disk is full; writes answer 503 StorageFull and /readyz 503 until space is freed");
      this.timer = setInterval(() => void this.probeOnce(), this.o.probeIntervalMs);
      this.timer.unref();
    }
    return err instanceof SluiceError ? err : new SluiceError("StorageFull");
  }

  private async probeOnce(): Promise<void> {
    if (this.probing || this.writable) return;
    this.probing = true;
    try {
      await this.o.probe();
      this.recovered();
    } catch {
      // Still full: the next tick tries again.
    } finally {
      this.probing = false;
    }
  }

  private recovered(): void {
    if (this.writable) return;
    this.writable = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.o.onChange?.(true);
    this.o.logger.info("store writable again: space was freed; writes are served and /readyz answers 200");
  }

  close(): void {
    clearInterval(this.timer);
  }

  /**
   * The store as every service sees it: each method's disk-full failure (thrown or rejected)
   * becomes StorageFull. Wrapped once per method, on first use.
   */
  guard<T extends object>(store: T): T {
    const wrapped = new Map<PropertyKey, unknown>();
    const translate = (err: unknown): never => {
      throw this.storageFull(err) ?? err;
    };
    return new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        let fn = wrapped.get(key);
        if (fn === undefined) {
          const method = value as (...args: unknown[]) => unknown;
          fn = (...args: unknown[]): unknown => {
            let result: unknown;
            try {
              result = method.apply(target, args);
            } catch (err) {
              translate(err);
            }
            return result instanceof Promise ? result.catch(translate) : result;
          };
          wrapped.set(key, fn);
        }
        return fn;
      },
    });
  }
}

const probeBytes = Buffer.alloc(1024 * 1024);

/**
 * The SQLite store's probe: 1 MiB written and synced in the data dir, then removed — room for
 * a good many group commits, so a disk with a few KiB free doesn't count as writable.
 */
export async function dataDirProbe(dataDir: string): Promise<void> {
  const path = join(dataDir, ".sluice-write-probe");
  try {
    const handle = await open(path, "w");
    try {
      await handle.writeFile(probeBytes);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  } finally {
    await unlink(path).catch(() => {});
  }
}
