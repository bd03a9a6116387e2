/**
 * A waiting request whose client left is told apart before anything else that arrived in the
 * same event-loop turn is acted on — so a worker's or consumer's long poll that just closed is
 * never handed a job or messages nobody will receive (src/protocols/http/client-gone.ts).
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { type Socket, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { onClientGone } from "../../src/protocols/http/client-gone.js";
import { type JobsServer, startJobsServer } from "../jobs/http-harness.js";
import { settle } from "./sqs-harness.js";

const sockets: Socket[] = [];

/** A raw connection: requests are written byte for byte, in the caller's tick. */
async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {}); // a reset we caused ourselves
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  return socket;
}

function httpRequest(method: string, path: string, body?: string, headers: Record<string, string> = {}): string {
  const all = { host: "127.0.0.1", ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }), ...headers };
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body ?? ""}`;
}

/** The next whole response on the socket (Content-Length bodies only, as the server sends). */
function readResponse(socket: Socket): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      data = Buffer.concat([data, chunk]);
      const headEnd = data.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const head = data.subarray(0, headEnd).toString("latin1");
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (data.length < headEnd + 4 + length) return;
      socket.off("data", onData);
      resolve({ status: Number(head.split(" ")[1]), body: data.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8") });
    };
    socket.on("data", onData);
    socket.once("close", () => reject(new Error("connection closed before a whole response")));
  });
}

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

describe("onClientGone", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A server whose /hold requests wait (handed to the test) and whose other requests are answered at once. */
  async function holdingServer(onOther: (res: ServerResponse) => void = (res) => res.end("ok")): Promise<{ port: number; held: Promise<{ req: IncomingMessage; res: ServerResponse }> }> {
    let heldResolve!: (held: { req: IncomingMessage; res: ServerResponse }) => void;
    const held = new Promise<{ req: IncomingMessage; res: ServerResponse }>((resolve) => (heldResolve = resolve));
    server = createServer((req, res) => {
      if (req.url === "/hold") heldResolve({ req, res });
      else onOther(res);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return { port: address.port, held };
  }

  for (const how of ["closes (FIN)", "resets (RST)"] as const) {
    it(`fires before the same turn's setImmediate work when the client ${how}`, async () => {
      const order: string[] = [];
      let secondDone!: () => void;
      const second = new Promise<void>((resolve) => (secondDone = resolve));
      const { port, held } = await holdingServer((res) => {
        // Where a submit's group commit runs: after this turn's I/O callbacks.
        setImmediate(() => {
          order.push("work of the request that came in meanwhile");
          secondDone();
        });
        res.end("ok");
      });
      const waiting = await openSocket(port);
      const other = await openSocket(port);
      waiting.write(httpRequest("GET", "/hold"));
      const { res } = await held;
      onClientGone(res, () => order.push("gone"));
      // Both in one tick: the server sees the disconnect and the new request in the same turn.
      if (how === "resets (RST)") waiting.resetAndDestroy();
      else waiting.destroy();
      other.write(httpRequest("GET", "/other"));
      await second;
      await settle(() => order.length === 2, "both events");
      expect(order).toEqual(["gone", "work of the request that came in meanwhile"]);
    });
  }

  it("fires at once when the client had already gone", async () => {
    const { port, held } = await holdingServer();
    const waiting = await openSocket(port);
    waiting.write(httpRequest("GET", "/hold"));
    const { res } = await held;
    waiting.destroy();
    await new Promise<void>((resolve) => res.once("close", resolve));
    let gone = 0;
    onClientGone(res, () => gone++);
    expect(gone).toBe(1);
  });

  it("stays silent for answered requests and leaves no listeners on a keep-alive socket", async () => {
    let gone = 0;
    let socketOfServer: Socket | undefined;
    const { port } = await holdingServer((res) => {
      socketOfServer = res.socket as Socket;
      onClientGone(res, () => gone++);
      res.end("ok");
    });
    const client = await openSocket(port);
    const baseline: number[] = [];
    for (let i = 0; i < 5; i++) {
      client.write(httpRequest("GET", "/other"));
      expect((await readResponse(client)).status).toBe(200);
      // The response's 'close' (which removes them) comes a tick after the bytes left.
      await new Promise((resolve) => setImmediate(resolve));
      const counts = ["end", "error", "close"].map((e) => socketOfServer!.listenerCount(e));
      if (i === 0) baseline.push(...counts);
      else expect(counts).toEqual(baseline);
    }
    client.destroy();
    await new Promise((resolve) => socketOfServer!.once("close", resolve));
    expect(gone).toBe(0);
  });
});

describe("long polls whose client just left", () => {
  let jobs: JobsServer | undefined;
  afterEach(async () => {
    await jobs?.stop();
    jobs = undefined;
  });

  it("a worker's lease is not handed the job submitted in the same turn; the next worker gets it at once", async () => {
    jobs = await startJobsServer();
    const { server } = jobs;
    const { port } = new URL(jobs.url);
    const worker = await openSocket(Number(port));
    const submitter = await openSocket(Number(port));
    worker.write(httpRequest("POST", "/v1/queues/ghost/leases", JSON.stringify({ max: 4, waitSeconds: 20 })));
    await settle(() => server.queues.waiters.waiterCount() === 1, "the lease to park");
    // The worker shuts down as a submit arrives.
    worker.destroy();
    submitter.write(httpRequest("POST", "/v1/queues/ghost/jobs", JSON.stringify({ input: { n: 1 } })));
    const submitted = await readResponse(submitter);
    expect(submitted.status).toBe(201);
    const id = (JSON.parse(submitted.body) as { job: { id: string } }).job.id;
    expect((await jobs.api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ status: "queued", attempt: 0 });
    await settle(() => server.queues.waiters.waiterCount() === 0, "the lease to end");
    const next = await jobs.api("POST", "/v1/queues/ghost/leases", { max: 4, waitSeconds: 0 });
    expect(next.body.jobs.map((j: { id: string; attempt: number }) => [j.id, j.attempt])).toEqual([[id, 1]]);
  });

  it("an SQS ReceiveMessage does not take the message sent in the same turn", async () => {
    jobs = await startJobsServer();
    const { server } = jobs;
    const { port } = new URL(jobs.url);
    await server.queues.createQueue("", { name: "ghost-sqs" });
    const queueUrl = `${jobs.url}/000000000000/ghost-sqs`;
    const sqs = (action: string, body: object): string =>
      httpRequest("POST", "/", JSON.stringify({ QueueUrl: queueUrl, ...body }), { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` });
    const consumer = await openSocket(Number(port));
    const producer = await openSocket(Number(port));
    consumer.write(sqs("ReceiveMessage", { WaitTimeSeconds: 20, MaxNumberOfMessages: 10 }));
    await settle(() => server.queues.waiters.waiterCount() === 1, "the receive to wait");
    consumer.destroy();
    producer.write(sqs("SendMessage", { MessageBody: "for whoever is still there" }));
    expect((await readResponse(producer)).status).toBe(200);
    await settle(() => server.queues.waiters.waiterCount() === 0, "the receive to end");
    producer.write(sqs("ReceiveMessage", { WaitTimeSeconds: 0, MaxNumberOfMessages: 10 }));
    const received = JSON.parse((await readResponse(producer)).body) as { Messages?: Array<{ Body: string }> };
    expect(received.Messages?.map((m) => m.Body)).toEqual(["for whoever is still there"]);
  });
});
