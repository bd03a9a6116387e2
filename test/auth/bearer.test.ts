/**
 * Bearer tokens on the jobs API through a real server: 401 with WWW-Authenticate when missing or
 * wrong, 403 for a missing scope, open health checks, SLUICE_API_TOKEN, and the SDK's `token`.
 */
import { Sluice } from "@sluice/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Secret } from "../../src/protocols/auth/principal.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { accountA, tokens, writeCredentials } from "./fixtures.js";

let srv: TestServer;

async function call(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; headers: Headers; json: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${srv.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as never };
}

beforeAll(async () => {
  const dir = await makeTempDir("sluice-auth-");
  srv = await startTestServer({ config: { credentialsFile: await writeCredentials(dir), accountId: accountA } });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("bearer tokens on the jobs API", () => {
  it("refuses a request without a token: 401, WWW-Authenticate: Bearer, code Unauthenticated", async () => {
    const res = await call("POST", "/v1/queues/q/jobs", undefined, { input: 1 });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="sluice"');
    expect(res.json.error?.code).toBe("Unauthenticated");
  });

  it("refuses a wrong token and a malformed Authorization header with 401 invalid_token", async () => {
    for (const authorization of ["Bearer not-a-token-of-ours", "Bearer", "Basic dXNlcjpwYXNz", "garbage"]) {
      const res = await fetch(`${srv.url}/v1/queues/q`, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("Unauthenticated");
    }
  });

  it("checks the token before the body: a bad body without a token is still a 401", async () => {
    const res = await fetch(`${srv.url}/v1/queues/q/jobs`, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(401);
  });

  it("answers 403 AccessDenied for a token without the route's scope, and serves one with it", async () => {
    const denied = await call("POST", "/v1/queues/scoped/leases", tokens.submitter.token, { max: 1 });
    expect(denied.status).toBe(403);
    expect(denied.json.error?.code).toBe("AccessDenied");
    expect(denied.json.error?.message).toContain("work");
    expect(denied.json.error?.message).not.toContain(tokens.submitter.token);

    const submitted = await call("POST", "/v1/queues/scoped/jobs", tokens.submitter.token, { input: { n: 1 } });
    expect(submitted.status).toBe(201);
    const leased = await call("POST", "/v1/queues/scoped/leases", tokens.worker.token, { max: 1 });
    expect(leased.status).toBe(200);
    expect((leased.json.jobs as unknown[]).length).toBe(1);
    expect((await call("PUT", "/v1/queues/scoped", tokens.worker.token, {})).status).toBe(403);
    expect((await call("PUT", "/v1/queues/scoped", tokens.admin.token, {})).status).toBe(200);
    expect((await call("GET", "/v1/queues/scoped/jobs", tokens.reader.token)).status).toBe(200);
    expect((await call("GET", "/v1/queues/scoped/jobs", tokens.worker.token)).status).toBe(403);
  });

  it("keeps /healthz and /readyz open", async () => {
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${srv.url}/readyz`)).status).toBe(200);
  });

  it("serves the SDK with its token, and refuses it without", async () => {
    const sdk = new Sluice({ url: srv.url, token: tokens.admin.token });
    const job = await sdk.queue("sdk-auth").submit({ x: 1 });
    expect(job.id).toBeTruthy();
    const anonymous = new Sluice({ url: srv.url });
    await expect(anonymous.queue("sdk-auth").submit({ x: 2 })).rejects.toMatchObject({ status: 401 });
  });
});

describe("/openapi.json with credentials", () => {
  it("lists 401 and 403 on every route, and every route answers 401 without a token (a signed URL: 403 without its signature)", async () => {
    const doc = (await call("GET", "/openapi.json", tokens.reader.token)).json as { paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>> };
    let signedUrls = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        if (op.security?.length === 0) {
          // The fs blob store's upload and download URLs: the URL's signature is the credential.
          signedUrls++;
          expect(Object.keys(op.responses), `${method} ${path}`).toContain("403");
          const url = `${path.replace("{id}", `blob_${"0".repeat(32)}`)}?expires=9999999999&signature=${"0".repeat(64)}`;
          const res = await fetch(`${srv.url}${url}`, { method: method.toUpperCase(), ...(method === "put" ? { body: "bytes" } : {}) });
          expect([res.status, ((await res.json()) as { error: { code: string } }).error.code], `${method} ${url}`).toEqual([403, "AccessDenied"]);
          continue;
        }
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(["401", "403"]));
        const url = path.replace(/\{\w+\}/g, "x");
        const res = await fetch(`${srv.url}${url}`, { method: method.toUpperCase(), ...(method === "get" ? {} : { headers: { "content-type": "application/json" }, body: "{}" }) });
        expect(res.status, `${method} ${url}`).toBe(401);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("Unauthenticated");
      }
    }
    expect(signedUrls).toBe(2);
  });
});

describe("SLUICE_API_TOKEN", () => {
  it("is a token with every scope for the default account", async () => {
    const server = await startTestServer({ config: { apiToken: new Secret("single-token-0123456789") } });
    const ok = await fetch(`${server.url}/v1/queues/env`, { method: "PUT", headers: { authorization: "Bearer single-token-0123456789", "content-type": "application/json" }, body: "{}" });
    expect(ok.status).toBe(200);
    expect((await fetch(`${server.url}/v1/queues/env`)).status).toBe(401);
    await server.stop();
  });
});

describe("open mode", () => {
  it("serves anonymous requests on loopback when no credentials are configured", async () => {
    const server = await startTestServer();
    expect((await fetch(`${server.url}/v1/queues/open`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(200);
    await server.stop();
  });
});
