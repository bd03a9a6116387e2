import { describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/index.js";
import { batchSubmitOrder } from "../../src/core/jobs/batch-graph.js";
import { type FoundParent, childOnParentDone, childOnSubmit, dependencyVerdict, submitWrite } from "../../src/core/jobs/dependencies.js";
import type { JobCreateItem } from "../../src/core/job-store.js";
import type { JobRecord } from "../../src/core/job.js";
import { validateSubmit } from "../../src/core/jobs/job-validation.js";

const messageOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof SluiceError ? `${err.code}: ${err.message}` : String(err);
  }
  return undefined;
};

describe("dependencyVerdict", () => {
  it("waits for every parent, then runs", () => {
    expect(dependencyVerdict([{ id: "a", status: "succeeded" }, { id: "b", status: "running" }], "fail")).toEqual({ kind: "wait" });
    expect(dependencyVerdict([{ id: "a", status: "succeeded" }, { id: "b", status: "succeeded" }], "fail")).toEqual({ kind: "run" });
  });
  it("fails at once with a failed parent (named, with its error), cancels with a canceled one", () => {
    const v = dependencyVerdict([{ id: "a", status: "running" }, { id: "b", status: "failed", error: { message: "GPU out of memory" } }], "fail");
    expect(v).toEqual({ kind: "end", status: "failed", error: { type: "ParentFailed", message: "Parent job b failed: GPU out of memory" } });
    expect(dependencyVerdict([{ id: "a", status: "canceled" }, { id: "b", status: "failed" }], "fail")).toMatchObject({ status: "failed", error: { type: "ParentFailed" } });
    expect(dependencyVerdict([{ id: "a", status: "canceled" }], "fail")).toEqual({ kind: "end", status: "canceled", error: { type: "ParentCanceled", message: "Parent job a was canceled." } });
  });
  it("with ignore, runs once every parent finished, however", () => {
    expect(dependencyVerdict([{ id: "a", status: "failed" }, { id: "b", status: "queued" }], "ignore")).toEqual({ kind: "wait" });
    expect(dependencyVerdict([{ id: "a", status: "failed" }, { id: "b", status: "canceled" }], "ignore")).toEqual({ kind: "run" });
  });
});

describe("a child judged by its parents as a store's write found them", () => {
  const child = { id: "c", account: "acme", dependsOn: ["a", "b"], status: "waiting", attempt: 0 } as unknown as JobRecord;
  const found = (parents: Record<string, FoundParent>) => (id: string) => parents[id];
  it("at submit: a parent missing, or another account's, refuses it as one that doesn't exist", () => {
    const a: FoundParent = { status: "succeeded", account: "acme" };
    expect(messageOf(() => childOnSubmit(child, found({ a }), 0, 60))).toBe("ValidationFailed: dependsOn names job b, which does not exist (or was pruned).");
    expect(messageOf(() => childOnSubmit(child, found({ a, b: { status: "running" } }), 0, 60))).toMatch(/names job b, which does not exist/);
    expect(childOnSubmit(child, found({ a, b: { status: "running", account: "acme" } }), 0, 60)).toMatchObject({ job: { status: "waiting" }, events: ["job.waiting"], withMessage: true });
  });
  it("once a parent ended: a parent gone meanwhile counts as canceled", () => {
    expect(childOnParentDone(child, found({ a: { status: "succeeded" } }), 5, 60)).toMatchObject({ job: { status: "canceled", error: { type: "ParentCanceled", message: "Parent job b was canceled." } }, message: { kind: "delete" } });
    expect(childOnParentDone(child, found({ a: { status: "succeeded" }, b: { status: "succeeded" } }), 5, 60)).toMatchObject({ job: { status: "queued", availableAtMs: 5 }, events: ["job.queued"] });
    expect(childOnParentDone(child, found({ a: { status: "succeeded" }, b: { status: "running" } }), 5, 60)).toBeUndefined();
  });
  it("a submit's write names the parents of a child still to run, waiting or queued; of one ended at submit, none", () => {
    const acme = { account: "acme" } as const;
    const item = { job: { ...child, status: "queued" }, message: { visibleAtMs: 0 } } as unknown as JobCreateItem;
    const judged = (b: FoundParent["status"]) => submitWrite(item, childOnSubmit(item.job, found({ a: { status: "succeeded", ...acme }, b: { status: b, ...acme } }), 0, 60));
    expect(judged("running")).toMatchObject({ job: { status: "waiting" }, parentIds: ["a", "b"] });
    expect(judged("succeeded")).toMatchObject({ job: { status: "queued" }, parentIds: ["a", "b"] });
    expect(judged("failed")).not.toHaveProperty("parentIds");
    expect(submitWrite({ ...item, job: { ...item.job, dependsOn: undefined } })).not.toHaveProperty("parentIds");
  });
});

describe("batchSubmitOrder", () => {
  it("puts parents before children and keeps the rest in entry order", () => {
    expect(batchSubmitOrder([[{ entry: 2 }], undefined, [{ entry: 1 }, "some-job-id"], []])).toEqual([1, 2, 0, 3]);
  });
  it("refuses a cycle, naming it", () => {
    expect(messageOf(() => batchSubmitOrder([[{ entry: 2 }], [{ entry: 0 }], [{ entry: 1 }]]))).toBe(
      "ValidationFailed: dependsOn makes a cycle between batch entries: 0 → 2 → 1 → 0 (each depends on the next).",
    );
  });
  it("refuses a reference to no entry, to itself, or twice to one entry", () => {
    expect(messageOf(() => batchSubmitOrder([[{ entry: 3 }], []]))).toBe("ValidationFailed: jobs[0].dependsOn refers to entry 3, but the batch has entries 0–1.");
    expect(messageOf(() => batchSubmitOrder([[], [{ entry: 1 }]]))).toBe("ValidationFailed: jobs[1].dependsOn refers to itself.");
    expect(messageOf(() => batchSubmitOrder([[], [{ entry: 0 }, { entry: 0 }]]))).toBe("ValidationFailed: jobs[1].dependsOn refers to entry 0 twice.");
  });
});

describe("a submit's dependsOn, tenant and onParentFailure", () => {
  it("are checked before anything is written", () => {
    expect(messageOf(() => validateSubmit({ input: 1, dependsOn: [] }))).toMatch(/dependsOn must list 1–100 job ids/);
    expect(messageOf(() => validateSubmit({ input: 1, dependsOn: ["a", "a"] }))).toMatch(/dependsOn names job a twice/);
    expect(messageOf(() => validateSubmit({ input: 1, onParentFailure: "ignore" }))).toMatch(/onParentFailure needs dependsOn/);
    expect(messageOf(() => validateSubmit({ input: 1, dependsOn: ["a"], onParentFailure: "skip" as never }))).toMatch(/onParentFailure must be one of fail, ignore/);
    expect(messageOf(() => validateSubmit({ input: 1, tenant: "" }))).toMatch(/tenant must be 1–128/);
    expect(messageOf(() => validateSubmit({ input: 1, tenant: "acme corp" }))).toMatch(/no spaces/);
    expect(messageOf(() => validateSubmit({ input: 1, tenant: "acme-corp:eu", dependsOn: ["x"], onParentFailure: "ignore" }))).toBeUndefined();
  });
});
