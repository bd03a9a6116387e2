/**
 * A job id or queue name that is `.` or `..` reaches the server as itself, so it answers as it
 * would for any unknown id or invalid name — not as whatever route the URL parser's dot-segment
 * removal made of the path (`/v1/jobs/..` is `/v1/`, the SQS endpoint's XML MissingAction;
 * `/v1/queues/./jobs` is `/v1/queues/jobs`, another queue's settings). fetch removes `%2E%2E` as
 * well, so the SDK sends `%252E%252E` and the server reads it back as `..`.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sluice, SluiceApiError } from "../../client/src/index.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { within } from "../support/wait.js";

let server: TestServer;
let sluice: Sluice;

beforeAll(async () => {
  server = await startTestServer();
  sluice = new Sluice({ url: server.url });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

async function apiError(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  const err = await p.then(
    (value) => ({ resolved: value }),
    (e: unknown) => e,
  );
  expect(err, `expected a SluiceApiError, got ${JSON.stringify(err)}`).toBeInstanceOf(SluiceApiError);
  const { status, code, message } = err as SluiceApiError;
  return { status, code, message };
}

/** A request sent with node:http, whose path no URL parser rewrites. */
function raw(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: server.port, method, path, headers: body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const invalidQueueName = { status: 400, code: "ValidationFailed", message: 'params.queue must match pattern "^[A-Za-z0-9_-]+$".' };

describe("dot-only path segments", () => {
  it("a job id . or .. is an unknown job: get, wait and cancel answer 404 JobNotFound naming it", async () => {
    for (const id of [".", ".."]) {
      const notFound = { status: 404, code: "JobNotFound", message: `Job ${id} does not exist.` };
      expect(await apiError(sluice.jobs.get(id)), `get ${id}`).toEqual(notFound);
      expect(await apiError(sluice.jobs.wait(id, { timeoutMs: 5_000 })), `wait ${id}`).toEqual(notFound);
      expect(await apiError(sluice.jobs.cancel(id)), `cancel ${id}`).toEqual(notFound);
    }
  });

  it("a queue name . or .. is an invalid name: submit, run, list and a worker's leases answer 400, and no other queue is touched", async () => {
    // `/v1/queues/./jobs` would be `/v1/queues/jobs`: the settings of a queue named "jobs".
    await sluice.queue("jobs").submit({});
    for (const name of [".", ".."]) {
      const q = sluice.queue(name);
      expect(await apiError(q.submit({ x: 1 })), `submit ${name}`).toEqual(invalidQueueName);
      expect(await apiError(q.run({ x: 1 }, { timeoutMs: 5_000 })), `run ${name}`).toEqual(invalidQueueName);
      expect(await apiError(q.list()), `list ${name}`).toEqual(invalidQueueName);
      expect(await apiError(sluice.jobs.list(name)), `jobs.list ${name}`).toEqual(invalidQueueName);
      // A worker stops on its own when the server refuses its lease requests for good.
      const worker = q.work(async () => "never", { onError: () => {} });
      expect(await apiError(within(10_000, worker.done, `worker on ${name}`)), `work ${name}`).toEqual(invalidQueueName);
    }
    expect((await sluice.queue("jobs").list()).jobs).toHaveLength(1);
  });

  it("the server reads a path segment %2E%2E — raw, or escaped again as %252E%252E — as ..", async () => {
    for (const segment of ["%2E%2E", "%2e%2e", "%252E%252E", "%252e%252E"]) {
      const got = await raw("GET", `/v1/jobs/${segment}`);
      expect(got, segment).toEqual({ status: 404, body: '{"error":{"code":"JobNotFound","message":"Job .. does not exist."}}' });
    }
    expect(JSON.parse((await raw("GET", "/v1/jobs/%252E")).body)).toMatchObject({ error: { message: "Job . does not exist." } });
    // Only a whole segment of one or two escaped dots: anything else keeps its text.
    expect(JSON.parse((await raw("GET", "/v1/jobs/%252E%252E%252E")).body)).toMatchObject({ error: { message: "Job %2E%2E%2E does not exist." } });
    expect(JSON.parse((await raw("GET", "/v1/jobs/a%252E%252E")).body)).toMatchObject({ error: { message: "Job a%2E%2E does not exist." } });
    const submitted = await raw("POST", "/v1/queues/%252E%252E/jobs", '{"input":{}}');
    expect({ status: submitted.status, ...(JSON.parse(submitted.body) as { error: object }).error }).toEqual(invalidQueueName);
  });
});
