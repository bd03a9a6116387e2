/**
 * An unauthenticated request that declares a large body is refused from its head: its 401/403
 * comes at once with `Connection: close`, and the connection closes without the body being read
 * (node would otherwise wait for every declared byte, up to the 60 s request timeout).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { accountA, writeCredentials } from "./fixtures.js";

let srv: TestServer;

beforeAll(async () => {
  const dir = await makeTempDir("sluice-unsigned-");
  srv = await startTestServer({ config: { credentialsFile: await writeCredentials(dir), accountId: accountA } });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

/** Sends only a request head, and resolves with what the server wrote once it closed the connection. */
function headOnly(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(srv.port, "127.0.0.1");
    let out = "";
    socket.on("data", (d) => (out += d.toString("latin1")));
    socket.on("close", () => resolve(out));
    socket.on("error", reject);
    socket.write(head);
  });
}

const declared = 3 * 1024 * 1024;

describe("an unauthenticated request with a large declared body", { timeout: 15_000 }, () => {
  const cases: Array<[string, string, RegExp]> = [
    ["SQS JSON", `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.SendMessage\r\nContent-Length: ${declared}\r\n\r\n`, /^HTTP\/1\.1 403 [\s\S]*"__type":"com\.amazonaws\.sqs#MissingAuthenticationToken"/],
    ["SQS query on /", `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${declared}\r\n\r\n`, /^HTTP\/1\.1 403 [\s\S]*<Code>MissingAuthenticationToken<\/Code>/],
    ["SQS query on a queue URL", `POST /${accountA}/q HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${declared}\r\n\r\n`, /^HTTP\/1\.1 403 [\s\S]*<Code>MissingAuthenticationToken<\/Code>/],
    ["SQS query, chunked", `POST /${accountA}/q HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n`, /^HTTP\/1\.1 403 [\s\S]*<Code>MissingAuthenticationToken<\/Code>/],
    ["jobs API", `POST /v1/queues/q/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`, /^HTTP\/1\.1 401 [\s\S]*"code":"Unauthenticated"/],
  ];
  for (const [what, head, answer] of cases) {
    it(`${what}: refused at once, and the connection closed without the body`, async () => {
      const out = await headOnly(head);
      expect(out).toMatch(answer);
      expect(out.slice(0, out.indexOf("\r\n\r\n")).toLowerCase()).toContain("\r\nconnection: close");
    });
  }

  it("a request without a body keeps its connection", async () => {
    const res = await fetch(`${srv.url}/v1/queues/q`);
    expect(res.status).toBe(401);
    expect(res.headers.get("connection")).not.toBe("close");
  });
});
