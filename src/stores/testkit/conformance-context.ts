/**
 * What the conformance suite's case files share: the store handle a factory gives, the context a
 * case file registers its cases with, and a message builder. Its own file, so that the case files
 * and the suite that registers them don't import each other.
 */
import type { JobAction, JobChange, JobStore } from "../../core/job-store.js";
import { transitionJob } from "../../core/jobs/job-actions.js";
import type { NewMessage } from "../../core/message.js";
import type { Store } from "../../core/store.js";

export interface StoreHandle {
  store: Store;
  /** Closes and reopens on the same data (durability cases). */
  reopen(): Promise<Store>;
  /**
   * Opens another handle on the same database, as a second node would (two-handle cases); the
   * handle's cleanup() closes it too. Its notifier must reach this handle's subscribers and back.
   */
  another(): Promise<Store>;
  cleanup(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreHandle>;

/** What case files registered from describeStoreConformance get (the current store changes per test). */
export interface ConformanceContext {
  store(): Store;
  reopen(): Promise<Store>;
  /** StoreHandle.another: a second handle on the current store's database. */
  another(): Promise<Store>;
  test(title: string, fn: () => Promise<void>): void;
}

export const T0 = 1_700_000_000_000;

let seqCounter = 0;
export function newMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  seqCounter++;
  return {
    messageId: `00000000-0000-4000-8000-${String(seqCounter).padStart(12, "0")}`,
    body: `body-${seqCounter}`,
    attributes: {},
    systemAttributes: {},
    bodyMd5: "d41d8cd98f00b204e9800998ecf8427e",
    sentAtMs: T0,
    visibleAtMs: T0,
    priority: 0,
    senderId: "000000000000",
    ...overrides,
  };
}

/**
 * One action by id in a jobTransitionMany call of its own, `nowMs` beside it: its change, or its
 * refusal thrown as the SluiceError it was answered with (as core's transitionJob).
 */
export function act(store: Pick<JobStore, "jobTransitionMany">, p: JobAction & { nowMs: number }): Promise<JobChange> {
  const { nowMs, ...action } = p;
  return transitionJob(store, nowMs, action as JobAction);
}
