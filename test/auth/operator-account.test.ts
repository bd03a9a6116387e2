/**
 * `Sluice-Account` end to end, through a real server with two accounts' tokens (A is the server's
 * own account, the operator's; B another): /openapi.json lists the header on every route that
 * honours it, and each of those routes refuses a B token naming A before it reads the body; the
 * TS SDK's `account` and the `sluice` CLI's `--account` / SLUICE_ACCOUNT make an operator token
 * see and work B's queues and jobs, and a B token naming A gets 403 through each.
 */
import { Sluice, SluiceApiError } from "@sluice/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRouteSpecs } from "../../src/protocols/jobs/admin-route-specs.js";
import { routeSpecs } from "../../src/protocols/jobs/route-specs.js";
import { killAllChildren, runCliToExit } from "../support/cli.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { writeCredentials } from "./fixtures.js";

const accountA = "111111111111";
const accountB = "222222222222";
const token = { A: "tok-operator-a-0123456789abcdef", B: "tok-tenant-b-0123456789abcdef" } as const;
const credentials = `
[[tokens]]
name = "operator"
token = "${token.A}"
accountId = "${accountA}"

[[tokens]]
name = "tenant-b"
token = "${token.B}"
accountId = "${accountB}"
`;

let srv: TestServer;

async function call(method: string, path: string, bearer: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; json: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  const res = await fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as never) : ({} as never) };
}

beforeAll(async () => {
  const dir = await makeTempDir("sluice-operator-");
  srv = await startTestServer({ config: { credentialsFile: await writeCredentials(dir, "credentials.toml", credentials), accountId: accountA } });
});
afterAll(async () => {
  await killAllChildren();
  await stopAllServers();
  await removeTempDirs();
});

interface Operation {
  parameters: Array<{ name: string; in: string; required: boolean; schema: { pattern?: string } }>;
  responses: Record<string, { description: string }>;
}

describe("Sluice-Account in /openapi.json", () => {
  it("is listed on every route that works on one account, and each refuses a B token naming A (403) or a bad id (400) before its body", async () => {
    const doc = (await call("GET", "/openapi.json", token.B)).json as unknown as { paths: Record<string, Record<string, Operation>> };
    const listed: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const header = op.parameters.find((p) => p.name === "Sluice-Account");
        if (!header) continue;
        listed.push(`${method.toUpperCase()} ${path}`);
        expect(header).toMatchObject({ in: "header", required: false, schema: { pattern: "^[0-9]{12}$" } });
        expect(op.responses["403"]!.description, path).toMatch(/Sluice-Account/);
        expect(op.responses["400"]!.description, path).toMatch(/Sluice-Account/);
        // "{}" fits no route's body, and `x` is no job: only the header decides these answers.
        const url = path.replace(/\{\w+\}/g, "x");
        const body = method === "get" ? undefined : {};
        const denied = await call(method.toUpperCase(), url, token.B, { "sluice-account": accountA }, body);
        expect(denied.status, `${method} ${url}`).toBe(403);
        expect(denied.json.error).toEqual({ code: "AccessDenied", message: `Only tokens of the server's own account may act for another account (Sluice-Account: ${accountA}); this token is account ${accountB}'s.` });
        const invalid = await call(method.toUpperCase(), url, token.A, { "sluice-account": "12345" }, body);
        expect(invalid.status, `${method} ${url}`).toBe(400);
        expect(invalid.json.error!.message).toBe("Sluice-Account must be one 12-digit account id.");
      }
    }
    // Every route but /openapi.json itself (the same document for every account) and the signed
    // blob URLs (their signature names the blob, and so the account).
    const perAccount = [...routeSpecs, ...adminRouteSpecs].filter((spec) => spec.operationId !== "getOpenApi" && spec.signedUrl !== true).map((spec) => `${spec.method} ${spec.path}`);
    expect(listed.sort()).toEqual(perAccount.sort());
    expect(doc.paths["/openapi.json"]!.get!.parameters.map((p) => p.name)).not.toContain("Sluice-Account");
  });
});

describe("the TS SDK's account option", () => {
  // wire: account
  it("sends Sluice-Account on every call: an operator token works B's queue as B; a B token naming A is AccessDenied", async () => {
    const operatorAsB = new Sluice({ url: srv.url, token: token.A, account: accountB, batchSubmits: false });
    const tenant = new Sluice({ url: srv.url, token: token.B, batchSubmits: false });
    const operator = new Sluice({ url: srv.url, token: token.A, batchSubmits: false });

    const job = await operatorAsB.queue("tenant-jobs").submit({ n: 1 });
    // The job is B's: B's own token sees it, the operator without the header does not.
    expect((await tenant.jobs.get(job.id)).input).toEqual({ n: 1 });
    await expect(operator.jobs.get(job.id)).rejects.toMatchObject({ code: "JobNotFound", status: 404 });
    expect((await operatorAsB.jobs.list("tenant-jobs")).jobs.map((j) => j.id)).toEqual([job.id]);

    // Leases, heartbeats and completions as B: a worker of the operator's drains B's queue.
    const worker = operatorAsB.queue("tenant-jobs").work(async (j) => ({ doubled: (j.input as { n: number }).n * 2 }));
    const done = await operatorAsB.jobs.wait(job.id, { timeoutMs: 30_000 });
    await worker.close();
    expect(done).toMatchObject({ status: "succeeded", output: { doubled: 2 } });

    await operatorAsB.schedules.put("tenant-nightly", { queue: "tenant-jobs", cron: "0 3 * * *", input: {} });
    expect((await tenant.schedules.get("tenant-nightly")).queue).toBe("tenant-jobs");

    const tenantAsA = new Sluice({ url: srv.url, token: token.B, account: accountA, batchSubmits: false });
    for (const attempt of [() => tenantAsA.queue("tenant-jobs").submit({ n: 2 }), () => tenantAsA.jobs.get(job.id), () => tenantAsA.jobs.list("tenant-jobs")]) {
      const err = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SluiceApiError);
      expect(err).toMatchObject({ code: "AccessDenied", status: 403 });
    }
    // A B token naming its own account is fine.
    expect((await new Sluice({ url: srv.url, token: token.B, account: accountB }).jobs.get(job.id)).id).toBe(job.id);
    expect(() => new Sluice({ url: srv.url, token: token.A, account: "2222" })).toThrow(/12-digit/);
  });
});

describe("the sluice CLI's --account and SLUICE_ACCOUNT", () => {
  it("lets an operator token list and read B's queues and jobs; a B token naming A exits 1 with AccessDenied", async () => {
    const { id } = await new Sluice({ url: srv.url, token: token.B }).queue("cli-tenant").submit({ from: "B" });
    const common = ["--url", srv.url, "--token", token.A];

    const queues = await runCliToExit(["queues", "list", "--json", "--prefix", "cli-tenant", ...common, "--account", accountB]);
    expect(queues.code, queues.stderr).toBe(0);
    expect((JSON.parse(queues.stdout) as { queues: Array<{ name: string }> }).queues.map((q) => q.name)).toEqual(["cli-tenant", "cli-tenant-dlq"]);

    const got = await runCliToExit(["jobs", "get", id, ...common], 60_000, { SLUICE_ACCOUNT: accountB });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ id, input: { from: "B" } });

    const denied = await runCliToExit(["queues", "list", "--json", "--url", srv.url, "--token", token.B], 60_000, { SLUICE_ACCOUNT: accountA });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("AccessDenied (HTTP 403)");

    const bad = await runCliToExit(["jobs", "get", id, ...common, "--account", "B"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--account must be a 12-digit account id, got "B"');
  });
});
