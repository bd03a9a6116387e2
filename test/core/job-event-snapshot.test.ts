/**
 * The event log's compact job snapshot (core/jobs/job-event-log.ts): every field of the record but
 * its input and lease token reads back as it was written — each optional field present or absent —
 * and a snapshot written in the earlier form (the record as a JSON object) reads as before.
 */
import { describe, expect, it } from "vitest";
import { eventSnapshotJson, jobOfSnapshot } from "../../src/core/job-event-log.js";
import { type JobRecord, newJobRecord } from "../../src/core/job.js";

const bare: JobRecord = newJobRecord(
  {
    id: "00000000-0000-4000-9000-000000000001",
    queueId: 7,
    queueName: "q",
    status: "queued",
    inputJson: '{"n":1}',
    attempt: 0,
    maxAttempts: 3,
    priority: 0,
    createdAtMs: 1_000,
    updatedAtMs: 1_000,
    cancelRequested: false,
  },
  41,
  undefined,
);

const full: JobRecord = {
  ...bare,
  account: "acct-1",
  status: "succeeded",
  outputJson: '{"text":"a \\"quoted\\" line\\n"}',
  error: { message: "earlier attempt failed", type: "Boom" },
  attempt: 2,
  progress: 0,
  startedAtMs: 2_000,
  finishedAtMs: 3_000,
  updatedAtMs: 3_000,
  idempotencyKey: "key-1",
  metadataJson: '{"who":"me"}',
  timeoutSeconds: 60,
  webhook: { url: "https://example.com/h", events: ["job.succeeded"] },
  cancelRequested: true,
  leaseToken: "7.secret-token",
  leaseSeconds: 30,
  leaseExpiresAtMs: 32_000,
  deadlineAtMs: 62_000,
  availableAtMs: 1_500,
  expiresAtMs: 9_000,
  messageSeq: 99,
  tenant: "t1",
  dependsOn: ["a", "b"],
  onParentFailure: "ignore",
};

function columnsOf(job: JobRecord) {
  return { jobId: job.id, queueName: job.queueName, account: job.account ?? "", outputJson: job.outputJson ?? null };
}

describe("the event log's job snapshot", () => {
  it.each([
    ["every optional field absent", bare],
    ["every field present", full],
  ])("reads back as written, but for its input (the job's, or null) and its lease token: %s", (_name, job) => {
    const snapshot = eventSnapshotJson(job);
    expect(snapshot.startsWith("[")).toBe(true);
    expect(snapshot).not.toContain("secret-token");
    expect(jobOfSnapshot(snapshot, columnsOf(job), job.inputJson)).toEqual({ ...job, leaseToken: undefined });
    expect(jobOfSnapshot(snapshot, columnsOf(job), undefined)).toEqual({ ...job, leaseToken: undefined, inputJson: "null" });
  });

  it("keeps the output out of the snapshot (a column of its own) and leaves trailing absent fields off", () => {
    expect(eventSnapshotJson(full)).not.toContain("quoted");
    expect(eventSnapshotJson(bare)).toBe('["queued",41,7,0,3,0,1000,1000,0]');
  });

  it("reads a snapshot written as the record's JSON object, as before", () => {
    const { inputJson: _input, leaseToken: _lease, ...state } = full;
    const old = JSON.stringify(state);
    expect(jobOfSnapshot(old, { ...columnsOf(full), outputJson: null }, full.inputJson)).toEqual({ ...state, inputJson: full.inputJson });
  });
});
