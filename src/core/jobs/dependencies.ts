/**
 * Job dependencies (dependsOn) as pure decisions. A child waits until its parents are done; then
 * it runs, or — a parent failed or was canceled, and the child says `onParentFailure: fail` — it
 * ends the same way, with an error naming that parent. A store reads the parents inside the write
 * that submits the child or finishes a parent, and applies the verdict there.
 */
import { fail } from "../errors.js";
import type { JobCreateItem, NewJob } from "../job-store.js";
import { type JobError, type JobEventType, type JobRecord, type JobStatus, type OnParentFailure, waitingVisibleAtMs } from "../job.js";
import type { NewMessage } from "../message.js";
import { type JobTransition, finish } from "./transitions.js";

export interface ParentState {
  id: string;
  status: JobStatus;
  error?: JobError;
}

/** A parent as a store's write found it by id (`account` as JobRecord's, or "" for the server's own). */
export type FoundParent = Omit<ParentState, "id"> & { account?: string };

export type DependencyVerdict =
  | { kind: "wait" }
  | { kind: "run" }
  /** The child ends without running: failed for a failed parent, canceled for a canceled one. */
  | { kind: "end"; status: "failed" | "canceled"; error: JobError };

const done = (s: JobStatus): boolean => s === "succeeded" || s === "failed" || s === "canceled";

/**
 * What the child does now, given its parents as they are. A failure is decided as soon as one
 * parent failed (no need to wait for the others); a failed parent is named before a canceled one.
 */
export function dependencyVerdict(parents: readonly ParentState[], onParentFailure: OnParentFailure): DependencyVerdict {
  if (onParentFailure === "fail") {
    const failed = parents.find((p) => p.status === "failed");
    if (failed) {
      const why = failed.error?.message ? `: ${failed.error.message}` : ".";
      return { kind: "end", status: "failed", error: { type: "ParentFailed", message: `Parent job ${failed.id} failed${why}` } };
    }
    const canceled = parents.find((p) => p.status === "canceled");
    if (canceled) return { kind: "end", status: "canceled", error: { type: "ParentCanceled", message: `Parent job ${canceled.id} was canceled.` } };
    return parents.every((p) => p.status === "succeeded") ? { kind: "run" } : { kind: "wait" };
  }
  return parents.every((p) => done(p.status)) ? { kind: "run" } : { kind: "wait" };
}

/**
 * A submitted child's first record, from its parents as the submit's write finds them (`found`):
 * waiting (its message invisible), queued as any submit, or already ended without a message (a
 * parent failed or was canceled) — and the event it is logged with. A parent that doesn't exist,
 * or is another account's, refuses the submit (ValidationFailed, before the store writes).
 */
export function childOnSubmit(job: NewJob, found: (id: string) => FoundParent | undefined, nowMs: number, resultTtlSeconds: number): { job: NewJob; events: JobEventType[]; withMessage: boolean } {
  const parents = (job.dependsOn ?? []).map((id): ParentState => {
    const parent = found(id);
    if (!parent || (parent.account ?? "") !== (job.account ?? "")) fail("ValidationFailed", `dependsOn names job ${id}, which does not exist (or was pruned).`);
    return { id, status: parent.status, error: parent.error };
  });
  const verdict = dependencyVerdict(parents, job.onParentFailure ?? "fail");
  if (verdict.kind === "run") return { job, events: ["job.queued"], withMessage: true };
  if (verdict.kind === "wait") return { job: { ...job, status: "waiting", availableAtMs: undefined }, events: ["job.waiting"], withMessage: true };
  const ended: NewJob = { ...job, status: verdict.status, error: verdict.error, availableAtMs: undefined, finishedAtMs: nowMs, expiresAtMs: nowMs + resultTtlSeconds * 1000 };
  return { job: ended, events: [verdict.status === "failed" ? "job.failed" : "job.canceled"], withMessage: false };
}

/**
 * A waiting child, one of whose parents just finished, judged by all its parents as the write
 * finds them (`found`; one pruned or deleted meanwhile finished long ago, and counts as gone):
 * still waiting (undefined), queued (its message visible now), or ended like its parent (its
 * message deleted; it never ran).
 */
export function childOnParentDone(child: JobRecord, found: (id: string) => FoundParent | undefined, nowMs: number, resultTtlSeconds: number): JobTransition | undefined {
  if (child.status !== "waiting") return undefined;
  const parents = (child.dependsOn ?? []).map((id): ParentState => {
    const parent = found(id);
    return parent ? { id, status: parent.status, error: parent.error } : { id, status: "canceled", error: { message: `Job ${id} no longer exists.` } };
  });
  const verdict = dependencyVerdict(parents, child.onParentFailure ?? "fail");
  if (verdict.kind === "wait") return undefined;
  if (verdict.kind === "run") {
    return { job: { ...child, status: "queued", availableAtMs: nowMs, updatedAtMs: nowMs }, events: ["job.queued"], message: { kind: "visibleAt", visibleAtMs: nowMs } };
  }
  const ended = finish({ ...child, error: verdict.error }, verdict.status, nowMs, resultTtlSeconds);
  return { job: ended, events: [verdict.status === "failed" ? "job.failed" : "job.canceled"], message: { kind: "delete" } };
}

/**
 * What a submit's write inserts: its job as submitted (queued), or as its parents judged it
 * (`child`: childOnSubmit's verdict), the events it is logged with, and its message — in its
 * tenant's group (fair leases serve groups; none without a tenant), with no deduplication id,
 * invisible while it waits — or none for a child that ended already; and the parents its
 * dependency rows name: a child still to run keeps them from being pruned (a waiting one is also
 * released by them).
 */
export function submitWrite(
  item: JobCreateItem,
  child?: ReturnType<typeof childOnSubmit>,
): { job: NewJob; events: readonly JobEventType[]; message?: NewMessage; parentIds?: readonly string[] } {
  const { job, events, withMessage } = child ?? { job: item.job, events: ["job.queued"] as const, withMessage: true };
  if (!withMessage) return { job, events };
  const message = { ...item.message, groupId: job.tenant, deduplicationId: undefined, visibleAtMs: job.status === "waiting" ? waitingVisibleAtMs : item.message.visibleAtMs };
  return job.dependsOn === undefined ? { job, events, message } : { job, events, message, parentIds: job.dependsOn };
}
