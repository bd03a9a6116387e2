/**
 * What `sluice worker <module>` expects as the module's default export: a handler function, or
 * an object naming the handler with its batch and worker settings (CLI flags win over these).
 */
import type { BatchHandler, BatchOptions, JobHandler } from "./handlers.js";
import type { JsonValue } from "./wire.js";

export interface WorkerSettings {
  concurrency?: number;
  leaseSeconds?: number;
  /** The worker's labels (WorkerOptions.labels). */
  labels?: Record<string, string>;
}

export type WorkerDefinition<I = JsonValue, O = JsonValue> =
  | JobHandler<I, O>
  | (WorkerSettings & { handler: JobHandler<I, O>; batch?: undefined })
  | (WorkerSettings & { handler: BatchHandler<I, O>; batch: BatchOptions });

/** Identity, for type inference in a worker module: `export default defineWorker({...})`. */
export function defineWorker<I = JsonValue, O = JsonValue>(definition: WorkerDefinition<I, O>): WorkerDefinition<I, O> {
  return definition;
}
