/**
 * Conformance cases for blob records (core/blobs/blob-store.ts): made, read per account, marked
 * uploaded once, attached all or none, due for the sweep by time, and made due at once when the
 * job that holds them is deleted.
 */
import { expect } from "vitest";
import type { BlobRecord } from "../../core/blobs/blob.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { jobCaseKit } from "./conformance-jobs-kit.js";

const hex = (n: number): string => `blob_${n.toString(16).padStart(32, "0")}`;
const day = 86_400_000;

function blob(n: number, overrides: Partial<BlobRecord> = {}): BlobRecord {
  return { id: hex(n), account: "", contentType: "image/png", createdAtMs: T0, expiresAtMs: T0 + day, ...overrides };
}

export function registerBlobCases({ store, another, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);

  test("a blob is read in its account only, marked uploaded once, and counted in the account's bytes", async () => {
    await store().blobCreate({ blob: blob(1) });
    await store().blobCreate({ blob: blob(2, { account: "acct-b" }) });
    expect(await store().blobGet({ account: "", id: hex(1) })).toEqual(blob(1));
    expect(await store().blobGet({ account: "acct-b", id: hex(1) })).toBeUndefined();
    expect(await store().blobGet({ id: hex(2) })).toEqual(blob(2, { account: "acct-b" }));
    expect(await store().blobMarkUploaded({ id: hex(1), size: 5_000_000_000, sha256: "ab", nowMs: T0 + 5, expiresAtMs: T0 + 5 + day })).toBe(true);
    expect(await store().blobMarkUploaded({ id: hex(1), size: 1, sha256: "cd", nowMs: T0 + 6, expiresAtMs: T0 + 6 + day })).toBe(false);
    const other = await another();
    expect(await other.blobGet({ account: "", id: hex(1) })).toEqual(blob(1, { uploadedAtMs: T0 + 5, size: 5_000_000_000, sha256: "ab", expiresAtMs: T0 + 5 + day }));
    expect(await other.blobBytes({ account: "" })).toBe(5_000_000_000);
    expect(await other.blobBytes({ account: "acct-b" })).toBe(0);
  });

  test("an attach takes every blob or none, and a detach gives them back", async () => {
    for (const n of [1, 2, 3]) await store().blobCreate({ blob: blob(n) });
    for (const n of [1, 2]) await store().blobMarkUploaded({ id: hex(n), size: n, sha256: "s", nowMs: T0, expiresAtMs: T0 + day });
    // 3 is not uploaded: nothing is attached.
    expect(await store().blobAttach({ account: "", ids: [hex(1), hex(3)], jobId: "job-a", checkAtMs: T0 + 1000 })).toBe(false);
    expect((await store().blobGet({ id: hex(1) }))!.jobId).toBeUndefined();
    expect(await store().blobAttach({ account: "acct-b", ids: [hex(1)], jobId: "job-a", checkAtMs: T0 + 1000 })).toBe(false);
    expect(await store().blobAttach({ account: "", ids: [hex(1), hex(2)], jobId: "job-a", checkAtMs: T0 + 1000 })).toBe(true);
    expect(await store().blobGet({ id: hex(2) })).toMatchObject({ jobId: "job-a", expiresAtMs: T0 + 1000 });
    // Held: another job can't take it.
    expect(await store().blobAttach({ account: "", ids: [hex(2)], jobId: "job-b", checkAtMs: T0 + 1000 })).toBe(false);
    await store().blobDetach({ ids: [hex(1), hex(2)], jobId: "job-b", expiresAtMs: T0 + 5 });
    expect((await store().blobGet({ id: hex(1) }))!.jobId).toBe("job-a");
    await store().blobDetach({ ids: [hex(1)], jobId: "job-a", expiresAtMs: T0 + 5 });
    expect(await store().blobGet({ id: hex(1) })).toMatchObject({ expiresAtMs: T0 + 5 });
    expect((await store().blobGet({ id: hex(1) }))!.jobId).toBeUndefined();
  });

  test("blobs are due by time, earliest first; a kept one is due again only when its job is deleted", async () => {
    await store().blobCreate({ blob: blob(1, { expiresAtMs: T0 + 30 }) });
    await store().blobCreate({ blob: blob(2, { expiresAtMs: T0 + 10 }) });
    await store().blobCreate({ blob: blob(3, { expiresAtMs: T0 + 99_999 }) });
    expect((await store().blobListDue({ nowMs: T0 + 50, limit: 10 })).map((b) => b.id)).toEqual([hex(2), hex(1)]);
    expect((await store().blobListDue({ nowMs: T0 + 50, limit: 1 })).map((b) => b.id)).toEqual([hex(2)]);
    expect(await store().blobDelete({ id: hex(2) })).toBe(true);
    expect(await store().blobDelete({ id: hex(2) })).toBe(false);

    const queue = await kit.makeQueue();
    await store().blobMarkUploaded({ id: hex(1), size: 1, sha256: "s", nowMs: T0, expiresAtMs: T0 + day });
    const { job } = await kit.submit(queue, { attachmentsJson: JSON.stringify({ a: { blobId: hex(1), size: 1, contentType: "image/png", sha256: "s" } }) });
    expect(await store().blobAttach({ account: "", ids: [hex(1)], jobId: job.id, checkAtMs: T0 + 100 })).toBe(true);
    expect((await store().jobGet({ id: job.id }))!.attachmentsJson).toContain(hex(1));
    await store().blobKeep({ id: hex(1) });
    expect(await store().blobListDue({ nowMs: T0 + 10 * day, limit: 10 })).toEqual([expect.objectContaining({ id: hex(3) })]);
    // The job ends and is pruned: its blob is due at once, held by nothing.
    await act(store(), { kind: "cancel", id: job.id, nowMs: T0 + 1, resultTtlSeconds: 1 });
    await store().jobPrune({ nowMs: T0 + 10 * day, limit: 10 });
    expect(await store().jobGet({ id: job.id })).toBeUndefined();
    const due = await store().blobListDue({ nowMs: T0 + 10 * day, limit: 10 });
    expect(due.map((b) => b.id)).toEqual([hex(1), hex(3)]);
    expect(due[0]!.jobId).toBeUndefined();
  });
}
