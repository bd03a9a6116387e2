/**
 * A job's JSON as every answer and event line writes it: the documented fields in their order,
 * absent ones as null, the input, output and metadata spliced in as the text they are stored as.
 */
import { describe, expect, it } from "vitest";
import type { JobRecord, WebhookDelivery } from "../../src/core/index.js";
import { deliveryWire, jobJson } from "../../src/protocols/jobs/wire.js";

const t0 = Date.UTC(2026, 10, 28, 17, 0, 0, 123);
const iso = (ms: number): string => new Date(ms).toISOString();
const base: JobRecord = {
  id: "job-1",
  seq: 1,
  queueId: 3,
  queueName: "embed",
  status: "queued",
  inputJson: '{"text":"caf\\u00e9 \\"quoted\\""}',
  attempt: 0,
  maxAttempts: 3,
  priority: 5,
  createdAtMs: t0,
  updatedAtMs: t0,
  cancelRequested: false,
  availableAtMs: t0 + 1_000,
};

describe("jobJson", () => {
  it("writes a queued job's fields in the documented order, absent ones as null", () => {
    expect(jobJson(base)).toBe(
      JSON.stringify({
        id: "job-1",
        queue: "embed",
        status: "queued",
        error: null,
        attempt: 0,
        maxAttempts: 3,
        priority: 5,
        progress: null,
        createdAt: iso(t0),
        startedAt: null,
        finishedAt: null,
        updatedAt: iso(t0),
        idempotencyKey: null,
        cancelRequested: false,
        timeoutSeconds: null,
        availableAt: iso(t0 + 1_000),
        leaseExpiresAt: null,
        webhook: null,
        tenant: null,
        requires: null,
        dependsOn: null,
        onParentFailure: null,
        input: { text: 'café "quoted"' },
        output: null,
        metadata: null,
      }).replace('"café \\"quoted\\""', '"caf\\u00e9 \\"quoted\\""'),
    );
  });

  it("writes a leased child's lease, parents and every optional field, escaping what it must", () => {
    const running: JobRecord = {
      ...base,
      status: "running",
      attempt: 2,
      progress: 0.25,
      startedAtMs: t0 + 5,
      updatedAtMs: t0 + 6,
      idempotencyKey: 'key "1"\\',
      timeoutSeconds: 60,
      leaseToken: "lease-1",
      leaseExpiresAtMs: t0 + 30_005,
      webhook: { url: "https://example.com/hook?a=1&b=\u2028", events: ["job.succeeded"] },
      tenant: "acme/eu",
      requires: { gpu: "a100" },
      dependsOn: ["p-1", "p-2"],
      onParentFailure: "ignore",
      error: { message: "first try failed\n", type: "Timeout" },
      metadataJson: '{"trace":"t-1"}',
    };
    const parent: JobRecord = { ...base, id: "p-1", status: "succeeded", outputJson: "[1,2]", finishedAtMs: t0 + 3 };
    const text = jobJson(running, { lease: true, parents: [parent] });
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([
      "id", "queue", "status", "error", "attempt", "maxAttempts", "priority", "progress", "createdAt", "startedAt", "finishedAt", "updatedAt",
      "idempotencyKey", "cancelRequested", "timeoutSeconds", "availableAt", "leaseExpiresAt", "webhook", "tenant", "requires", "dependsOn", "onParentFailure",
      "leaseId", "input", "output", "metadata", "parents",
    ]);
    expect(parsed).toMatchObject({
      status: "running",
      error: { message: "first try failed\n", type: "Timeout" },
      progress: 0.25,
      startedAt: iso(t0 + 5),
      idempotencyKey: 'key "1"\\',
      availableAt: null,
      leaseExpiresAt: iso(t0 + 30_005),
      webhook: running.webhook,
      tenant: "acme/eu",
      requires: { gpu: "a100" },
      dependsOn: ["p-1", "p-2"],
      onParentFailure: "ignore",
      leaseId: "lease-1",
      metadata: { trace: "t-1" },
      parents: [{ id: "p-1", queue: "embed", status: "succeeded", output: [1, 2], error: null }],
    });
    // Without `lease` (every answer but a lease's), no lease id.
    expect(JSON.parse(jobJson(running))).not.toHaveProperty("leaseId");
  });

  it("adds a job's webhook deliveries after its fields", () => {
    const done: JobRecord = { ...base, status: "succeeded", outputJson: '"ok"', finishedAtMs: t0 + 9 };
    const delivery: WebhookDelivery = { id: "d-1", jobId: "job-1", event: "job.succeeded", url: "https://example.com/h", status: "delivered", attempts: 1, createdAtMs: t0 + 9, lastAttemptAtMs: t0 + 10, lastStatusCode: 204, deliveredAtMs: t0 + 10, job: done } as unknown as WebhookDelivery;
    const parsed = JSON.parse(jobJson(done, { deliveries: [delivery] })) as Record<string, unknown>;
    expect(parsed.webhookDeliveries).toEqual([deliveryWire(delivery)]);
    expect(Object.keys(parsed).slice(-4)).toEqual(["webhookDeliveries", "input", "output", "metadata"]);
    expect(parsed.output).toBe("ok");
    expect(parsed.availableAt).toBeNull();
  });
});
