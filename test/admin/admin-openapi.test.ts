/** The admin routes in /openapi.json: each one served and documented, and every status it lists really answered. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRouteSpecs } from "../../src/protocols/jobs/admin-route-specs.js";
import { type JobsServer, startJobsServer } from "../jobs/http-harness.js";
import { openApiCoverage } from "../jobs/openapi-coverage.js";

let s: JobsServer;
beforeAll(async () => {
  s = await startJobsServer();
});
afterAll(async () => {
  await s.stop();
});

describe("admin routes in /openapi.json", () => {
  it("documents each admin route the server serves, with the scope it needs", async () => {
    const doc = (await s.api("GET", "/openapi.json")).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, { tags: string[] }>>).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.tags.includes("admin"))
        .map(([m]) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(
      [
        "GET /v1/queues",
        "POST /v1/queues",
        "DELETE /v1/queues/{queue}",
        "GET /v1/events/queues",
        "GET /v1/queues/{queue}/events",
        "GET /v1/queues/{queue}/messages",
        "POST /v1/queues/{queue}/messages",
        "POST /v1/queues/{queue}/purge",
        "PUT /v1/queues/{queue}/attributes",
        "POST /v1/queues/{queue}/redrive",
        "GET /v1/queues/{queue}/redrive",
        "POST /v1/redrives/{taskHandle}/cancel",
        "POST /v1/jobs/{id}/retry",
      ].sort(),
    );
    for (const spec of adminRouteSpecs) {
      expect(s.server.app.hasRoute({ method: spec.method, url: spec.path.replace(/\{(\w+)\}/g, ":$1") }), spec.operationId).toBe(true);
      expect(spec.scopes, spec.operationId).toEqual(spec.method === "GET" ? ["read", "admin"] : ["admin"]);
    }
  });

  it("every status an admin route lists is answered, with a body its schema admits", async () => {
    const doc = (await s.api("GET", "/openapi.json")).body;
    const { check, checkStream, unanswered } = openApiCoverage(s, doc);
    const overBodyLimit = "x".repeat(4 * 1024 * 1024 + 1);
    const text = { "content-type": "text/plain" };

    // A job queue with one failed job (its message in a-dlq), and a plain queue.
    const { job } = await check("POST", "/v1/queues/a/jobs", 201, { input: 1, maxAttempts: 1 });
    const [leased] = (await check("POST", "/v1/queues/a/leases", 200, {})).jobs;
    await check("POST", `/v1/jobs/${job.id}/fail`, 200, { leaseId: leased.leaseId, error: { message: "x" }, retryable: false });
    await s.server.queues.createQueue("", { name: "small", config: { maximumMessageSizeBytes: 1024 } });

    const page = await check("GET", "/v1/queues?limit=1", 200);
    await check("GET", `/v1/queues?cursor=${page.nextCursor}`, 200);
    await check("GET", "/v1/queues?limit=0", 400);
    await checkStream("/v1/events/queues");
    await check("GET", "/v1/events/queues?intervalSeconds=61", 400);
    await checkStream("/v1/queues/a/events");
    await check("GET", "/v1/queues/a.b/events", 400);
    await check("GET", "/v1/queues/never/events", 404);

    await check("POST", "/v1/queues/small/messages", 201, { body: "hi" });
    await check("POST", "/v1/queues/small/messages", 400, { body: "" });
    await check("POST", "/v1/queues/never/messages", 404, { body: "x" });
    await check("POST", "/v1/queues/small/messages", 413, { body: "x".repeat(2048) });
    await check("POST", "/v1/queues/small/messages", 415, "{}", text);
    await check("GET", "/v1/queues/small/messages", 200);
    await check("GET", "/v1/queues/small/messages?limit=x", 400);
    await check("GET", "/v1/queues/never/messages", 404);

    await check("PUT", "/v1/queues/small/attributes", 200, { delaySeconds: 1 });
    await check("PUT", "/v1/queues/small/attributes", 400, { delaySeconds: -1 });
    await check("PUT", "/v1/queues/never/attributes", 404, {});
    await check("PUT", "/v1/queues/small/attributes", 413, { x: overBodyLimit });
    await check("PUT", "/v1/queues/small/attributes", 415, "{}", text);

    const { task } = await check("POST", "/v1/queues/a-dlq/redrive", 201, { maxPerSecond: 1 });
    await check("POST", "/v1/queues/a-dlq/redrive", 409, {});
    await check("POST", "/v1/queues/small/redrive", 400, {});
    await check("POST", "/v1/queues/never/redrive", 404, {});
    await check("POST", "/v1/queues/a-dlq/redrive", 413, { x: overBodyLimit });
    await check("POST", "/v1/queues/a-dlq/redrive", 415, "{}", text);
    await check("GET", "/v1/queues/a-dlq/redrive", 200);
    await check("GET", "/v1/queues/a..b/redrive", 400);
    await check("GET", "/v1/queues/never/redrive", 404);
    await s.server.queues.moveTasks.runner.idle();
    await check("POST", `/v1/redrives/${task.taskHandle}/cancel`, 200);
    await s.server.queues.moveTasks.runner.idle();
    await check("POST", `/v1/redrives/${task.taskHandle}/cancel`, 409);
    await check("POST", `/v1/redrives/${"t".repeat(129)}/cancel`, 400);
    await check("POST", "/v1/redrives/never/cancel", 404);
    await check("POST", `/v1/redrives/${task.taskHandle}/cancel`, 413, { x: overBodyLimit });
    await check("POST", `/v1/redrives/${task.taskHandle}/cancel`, 415, "{}", text);

    await check("POST", `/v1/jobs/${job.id}/retry`, 200);
    await check("POST", `/v1/jobs/${job.id}/retry`, 409);
    await check("POST", `/v1/jobs/${"j".repeat(129)}/retry`, 400);
    await check("POST", "/v1/jobs/never/retry", 404);
    await check("POST", `/v1/jobs/${job.id}/retry`, 413, { x: overBodyLimit });
    await check("POST", `/v1/jobs/${job.id}/retry`, 415, "{}", text);

    await check("POST", "/v1/queues", 201, { name: "made", attributes: { delaySeconds: 2 } });
    await check("POST", "/v1/queues", 200, { name: "made", attributes: { delaySeconds: 2 } });
    await check("POST", "/v1/queues", 409, { name: "made", attributes: { delaySeconds: 3 } });
    await check("POST", "/v1/queues", 400, { name: "bad name" });
    await check("POST", "/v1/queues", 413, { name: "made", x: overBodyLimit });
    await check("POST", "/v1/queues", 415, "{}", text);
    await check("DELETE", "/v1/queues/made", 200);
    await check("DELETE", "/v1/queues/made", 404);
    await check("DELETE", "/v1/queues/a..b", 400);

    await check("POST", "/v1/queues/small/purge", 200);
    await check("POST", "/v1/queues/small/purge", 409);
    await check("POST", "/v1/queues/a.b/purge", 400);
    await check("POST", "/v1/queues/never/purge", 404);
    await check("POST", "/v1/queues/small/purge", 413, { x: overBodyLimit });
    await check("POST", "/v1/queues/small/purge", 415, "{}", text);

    expect(unanswered((op) => op.tags.includes("admin"))).toEqual([]);
  });
});
