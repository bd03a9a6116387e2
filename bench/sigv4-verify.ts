/**
 * CPU per SigV4 verification of one signed SendMessageBatch (10 × 1 KiB), in-process:
 * `npx tsx bench/sigv4-verify.ts [requests]` (docs/security.md, "What verification costs").
 */
import { SignatureV4 } from "@smithy/signature-v4";
import { NodeSha256 } from "../src/protocols/auth/sha256.js";
import { SigV4Verifier } from "../src/protocols/auth/sigv4.js";
import { Secret, type AccessKey, type Credentials, allScopes } from "../src/protocols/auth/principal.js";

const key = { accessKeyId: "AKIDBENCH", secretAccessKey: "bench-secret-0123456789" };
const access: AccessKey = { accessKeyId: key.accessKeyId, secretAccessKey: new Secret(key.secretAccessKey), accountId: "000000000000", scopes: new Set(allScopes) };
const credentials: Credentials = { accessKeys: new Map([[key.accessKeyId, access]]), tokensByDigest: new Map(), accounts: new Map() };
const body = Buffer.from(JSON.stringify({ QueueUrl: "http://127.0.0.1:9324/000000000000/bench", Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: "x".repeat(1024) })) }));
const signer = new SignatureV4({ credentials: key, region: "us-east-1", service: "sqs", sha256: NodeSha256 });
const now = new Date();
const signed = await signer.sign({ method: "POST", protocol: "http:", hostname: "127.0.0.1", port: 9324, path: "/", query: {}, headers: { host: "127.0.0.1:9324", "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessageBatch", "content-length": String(body.length) }, body }, { signingDate: now });
const headers = Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
const verifier = new SigV4Verifier();
const req = { method: "POST", url: "/", headers, body };
const first = await verifier.verify(req, credentials, now.getTime());
if (!first.ok) throw new Error(JSON.stringify(first));
const n = Number(process.argv[2] ?? 20000);
for (let round = 0; round < 3; round++) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await verifier.verify(req, credentials, now.getTime());
  const t = process.cpuUsage(t0);
  console.log(`${(((t.user + t.system) / n)).toFixed(1)} µs CPU per verify`);
}
