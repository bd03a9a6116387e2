/**
 * 1,000 concurrent 20 s SQS long polls beside slow-loris clients, against a running server:
 * every poll answered, each loris cut off, and how long /healthz takes meanwhile.
 *
 *   npx tsx bench/long-polls-check.ts http://127.0.0.1:9324
 */
import { connect } from "node:net";
import { Agent, request } from "undici";

const url = process.argv[2] ?? "http://127.0.0.1:9324";
const polls = 1_000;
const agent = new Agent({ connections: polls + 20, headersTimeout: 60_000, bodyTimeout: 60_000 });
const sqs = async (action: string, body: unknown) => {
  const res = await request(`${url}/`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` }, body: JSON.stringify(body) });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
};
const { QueueUrl } = (await sqs("CreateQueue", { QueueName: "long-polls-check" })).json as { QueueUrl: string };
const started = Date.now();
const answered = Promise.all(Array.from({ length: polls }, () => sqs("ReceiveMessage", { QueueUrl, WaitTimeSeconds: 20 }).then((r) => r.status)));
const { port, hostname } = new URL(url);
const loris = Array.from({ length: 5 }, () =>
  new Promise<number>((resolve) => {
    const t0 = Date.now();
    const socket = connect(Number(port), hostname);
    const timer = setInterval(() => socket.writable && socket.write("a"), 1_000);
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    socket.on("error", () => {});
    socket.on("close", () => {
      clearInterval(timer);
      resolve(Date.now() - t0);
    });
  }),
);
await new Promise((r) => setTimeout(r, 2_000));
const healthMs: number[] = [];
for (let i = 0; i < 10; i++) {
  const t0 = performance.now();
  await (await request(`${url}/healthz`, { dispatcher: agent })).body.text();
  healthMs.push(Math.round((performance.now() - t0) * 10) / 10);
}
const statuses = await answered;
console.log(JSON.stringify({ polls, answered200: statuses.filter((s) => s === 200).length, pollsTookS: (Date.now() - started) / 1000, lorisClosedAfterS: (await Promise.all(loris)).map((ms) => ms / 1000), healthzMs: healthMs }));
await agent.close();
