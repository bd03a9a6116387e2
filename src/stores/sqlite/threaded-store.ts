/**
 * The Store the server uses: a proxy that forwards every Store method to a SqliteStore running on
 * a worker thread (store-worker.ts). Core errors are rebuilt as SluiceErrors on this side.
 */
import { Worker } from "node:worker_threads";
import { SluiceError } from "../../core/errors.js";
import { InProcessNotifier } from "../../core/notifier.js";
import type { QueueRecord } from "../../core/queue.js";
import type { Store } from "../../core/store.js";
import type { SqliteStoreOptions } from "./sqlite-store.js";
import type { CheckpointWorkerOptions } from "./checkpoint-worker.js";
import type { WorkerReply, WorkerRequest } from "./worker-protocol.js";

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Built, a worker is `<name>.js`. From source (tsx, vitest) it is a .ts file: a small bootstrap
 * registers tsx's loader inside the worker first (loaders don't cross into workers).
 */
function startWorker(name: "store-worker" | "checkpoint-worker", workerData: unknown): Worker {
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL(`./${name}.js`, import.meta.url), { workerData });
  }
  const entry = new URL(`./${name}.ts`, import.meta.url).href;
  const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/**
 * The writer checkpoints only as a backstop (if the checkpoint thread fell behind); normally the
 * checkpoint thread does it, outside the commits.
 */
const writerAutocheckpointPages = 50_000;
const checkpointIntervalMs = 100;
/** Calls per message to the store thread (see `send`); 4 measured best of 1–8 (docs/benchmarks.md). */
const outboxMaxCalls = 4;

async function startCheckpointer(filename: string): Promise<Worker> {
  const worker = startWorker("checkpoint-worker", { filename, intervalMs: checkpointIntervalMs } satisfies CheckpointWorkerOptions);
  await new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
  });
  return worker;
}

export async function openThreadedSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const worker = startWorker("store-worker", { walAutocheckpointPages: writerAutocheckpointPages, pipelinedSync: true, ...options } satisfies SqliteStoreOptions);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let failure: Error | undefined;

  const ready = new Promise<void>((resolve, reject) => {
    pending.set(0, { resolve: () => resolve(), reject });
  });

  worker.on("message", (replies: WorkerReply[]) => {
    for (const reply of replies) {
      const waiter = pending.get(reply.id);
      if (!waiter) continue;
      pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.value);
      else if (reply.error.code) waiter.reject(new SluiceError(reply.error.code, reply.error.message));
      else waiter.reject(new Error(`store worker: ${reply.error.message}`));
    }
  });
  const failAll = (error: Error): void => {
    failure = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`store worker exited (code ${code})`)));

  await ready;
  const checkpointer = await startCheckpointer(options.filename);
  // If it ever dies, the writer's backstop autocheckpoint keeps the WAL bounded.
  checkpointer.on("error", () => undefined);

  // Calls made in one turn of the event loop travel together and share one commit — but at most
  // `outboxMaxCalls` at a time: a turn that parses dozens of requests would otherwise leave the
  // store thread idle until the end of the turn, and the whole server would alternate between
  // its two threads instead of running them side by side.
  let outbox: WorkerRequest[] = [];
  const send = (): void => {
    if (outbox.length === 0) return;
    const batch = outbox;
    outbox = [];
    if (!failure) worker.postMessage(batch);
  };
  const call = (method: string, params: unknown): Promise<unknown> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      if (outbox.length === 0) setImmediate(send);
      outbox.push({ id, method, params });
      if (outbox.length >= outboxMaxCalls) send();
    });
  };

  // Queue records are read on every request but change only through this proxy (the worker is
  // the file's only writer), so they are cached here and dropped whenever a queue is written.
  // A read that started before a write never fills the cache (the generation moved on).
  const queueCache = new Map<string, QueueRecord>();
  let queueGeneration = 0;
  const writeQueue = (method: string) => async (params: unknown): Promise<unknown> => {
    queueGeneration++;
    queueCache.clear();
    try {
      return await call(method, params);
    } finally {
      queueGeneration++;
      queueCache.clear();
    }
  };

  const own = {
    async queueGet(params: { name: string }): Promise<QueueRecord | undefined> {
      const cached = queueCache.get(params.name);
      if (cached) return cached;
      const generation = queueGeneration;
      const queue = (await call("queueGet", params)) as QueueRecord | undefined;
      if (queue && generation === queueGeneration) queueCache.set(params.name, Object.freeze(queue));
      return queue;
    },
    // The one server process holds the only handle: its notices stay on this thread.
    notifier: new InProcessNotifier(),
    queueCreate: writeQueue("queueCreate"),
    queueUpdate: writeQueue("queueUpdate"),
    queueDelete: writeQueue("queueDelete"),
    async close(): Promise<void> {
      checkpointer.postMessage("close");
      await checkpointer.terminate();
      if (failure) return;
      await call("close", undefined);
      await worker.terminate();
    },
  };
  return new Proxy(own, {
    get(target, prop) {
      if (prop in target) return target[prop as keyof typeof target];
      // Not a thenable: `await store` must not call through to the worker.
      if (typeof prop !== "string" || prop === "then") return undefined;
      return (params: unknown) => call(prop, params);
    },
  }) as unknown as Store;
}
