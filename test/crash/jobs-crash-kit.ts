/**
 * What test/crash/jobs-kill9.test.ts records while it drives real clients against a server it
 * kills: the outage (which server is answering), a ledger of every lease handed out and every
 * completion the server acknowledged, a plain-HTTP worker, and a webhook receiver that refuses
 * deliveries until told otherwise.
 */
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { CompleteAck, FetchLike, LeaseRequest, LeaseResponse, LeasedJob } from "../../client/src/index.js";

/** What every job of the test carries: enough shape (unicode, arrays, sizes) to notice a mangled input. */
export interface Input {
  queue: string;
  n: number;
  text: string;
  tags: number[];
  pad: string;
}

/** What every worker answers: the attempt it ran, so the stored output names the run that produced it. */
export interface Output {
  n: number;
  attempt: number;
}

export function inputOf(queue: string, n: number): Input {
  return { queue, n, text: `job ${n} of ${queue}: ünïcødé 🌊 "quoted" \\ back`, tags: [n % 3, n % 5, n % 7], pad: "x".repeat((n * 37) % 300) };
}

/** Deterministic pseudo-randomness (mulberry32), so a failing run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Which server is answering. `generation` is 1 until the restart begins, then 2: an answer read
 * under generation 1 came from the server that was killed. While `down`, a client's network
 * error is the kill's doing; `restarted` resolves once the second server listens.
 */
export class Outage {
  generation = 1;
  down = false;
  private markUp!: () => void;
  readonly restarted = new Promise<void>((resolve) => (this.markUp = resolve));

  up(): void {
    this.down = false;
    this.markUp();
  }

  /** A client request failed: expected only while the server is down (then wait for it), else rethrown. */
  async survive(err: unknown): Promise<void> {
    if (!this.down) throw err;
    await this.restarted;
  }
}

export interface LeaseRecord {
  jobId: string;
  queue: string;
  leaseId: string;
  attempt: number;
  generation: number;
  seq: number;
}

export interface AckRecord {
  jobId: string;
  leaseId: string;
  output: Output;
  via: "route" | "lease";
  generation: number;
  seq: number;
}

/**
 * Every lease our clients were handed and every completion the server acknowledged, in order.
 * A lease is a job id and a leaseId together: the jobs one lease request hands out share its leaseId.
 */
export class Ledger {
  private seq = 0;
  /** By leaseKey(). */
  readonly leases = new Map<string, LeaseRecord>();
  readonly leasesByJob = new Map<string, LeaseRecord[]>();
  readonly acks = new Map<string, AckRecord[]>();

  constructor(private readonly outage: Outage) {}

  leased(job: LeasedJob<Input>): void {
    const record = { jobId: job.id, queue: job.queue, leaseId: job.leaseId, attempt: job.attempt, generation: this.outage.generation, seq: this.seq++ };
    const key = leaseKey(job.id, job.leaseId);
    if (this.leases.has(key)) throw new Error(`job ${job.id} handed out twice under lease ${job.leaseId}`);
    this.leases.set(key, record);
    this.leasesByJob.set(job.id, [...(this.leasesByJob.get(job.id) ?? []), record]);
  }

  acked(jobId: string, leaseId: string, output: Output, via: AckRecord["via"]): void {
    const record = { jobId, leaseId, output, via, generation: this.outage.generation, seq: this.seq++ };
    this.acks.set(jobId, [...(this.acks.get(jobId) ?? []), record]);
  }

  ackCount(queue: string, generation?: number): number {
    let count = 0;
    for (const list of this.acks.values()) {
      for (const a of list) if (this.leases.get(leaseKey(a.jobId, a.leaseId))?.queue === queue && (generation === undefined || a.generation === generation)) count++;
    }
    return count;
  }

  leaseCount(queue: string, generation: number): number {
    return [...this.leases.values()].filter((l) => l.queue === queue && l.generation === generation).length;
  }
}

export function leaseKey(jobId: string, leaseId: string): string {
  return `${jobId} ${leaseId}`;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** A plain HTTP call to the jobs API; rejects only when no answer came (the server is gone). */
export async function api<T>(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * Global fetch for the SDK, writing into the ledger what the server answered: the jobs each lease
 * request was handed, the acks its `results` confirmed, and each 200 of the complete route. The
 * body is read here, before the SDK sees it, so nothing counts as acknowledged that the SDK
 * didn't get in full.
 */
export function observingFetch(ledger: Ledger): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init);
    const path = new URL(url).pathname;
    const leases = path.endsWith("/leases");
    const complete = /^\/v1\/jobs\/([^/]+)\/complete$/.exec(path);
    if (!res.ok || init.method !== "POST" || !(leases || complete)) return res;
    const text = await res.text();
    const sent = JSON.parse(String(init.body)) as LeaseRequest & { leaseId: string; output: Output };
    if (leases) {
      const answer = JSON.parse(text) as LeaseResponse<Input>;
      for (const result of answer.results ?? []) {
        const ack = sent.complete?.find((c) => c.id === result.id);
        if (result.ok && ack) ledger.acked(ack.id, ack.leaseId, ack.output as unknown as Output, "lease");
      }
      for (const job of answer.jobs) ledger.leased(job);
    } else {
      ledger.acked(decodeURIComponent(complete![1]!), sent.leaseId, sent.output, "route");
    }
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** The lease errors a report may meet when its lease came from the killed server. */
export const staleLeaseCodes = new Set(["LeaseExpired", "LeaseMismatch", "JobAlreadyFinished"]);

/**
 * A worker in plain HTTP on `queue` until `stop()`: leases up to 4 jobs at a time; completes the
 * even-numbered ones through `POST /v1/jobs/{id}/complete` and carries the odd ones as acks on
 * its next lease request. A request that gets no answer (the kill) is not resent: its jobs are
 * left to their leases, as a worker that died with the server would.
 */
export async function plainWorker(p: { baseUrl: string; queue: string; leaseSeconds: number; ledger: Ledger; outage: Outage; stop: () => boolean }): Promise<void> {
  const { ledger, outage } = p;
  /** A 409 is expected only for a lease the killed server handed out. */
  const checkRefusal = (jobId: string, leaseId: string, code: string, what: string): void => {
    if (!(staleLeaseCodes.has(code) && ledger.leases.get(leaseKey(jobId, leaseId))!.generation < outage.generation)) throw new Error(`${what} refused with ${code}`);
  };
  let acks: CompleteAck[] = [];
  while (!p.stop()) {
    const sent = acks;
    acks = [];
    let res: Answer<LeaseResponse<Input>>;
    try {
      const body: LeaseRequest = { max: 4, waitSeconds: sent.length > 0 ? 0 : 1, leaseSeconds: p.leaseSeconds, ...(sent.length > 0 ? { complete: sent } : {}) };
      res = await api(p.baseUrl, "POST", `/v1/queues/${p.queue}/leases`, body);
    } catch (err) {
      await outage.survive(err);
      continue;
    }
    if (res.status !== 200) throw new Error(`lease on ${p.queue}: ${res.status} ${JSON.stringify(res.body)}`);
    for (const result of res.body.results ?? []) {
      const ack = sent.find((a) => a.id === result.id)!;
      if (result.ok) ledger.acked(ack.id, ack.leaseId, ack.output as unknown as Output, "lease");
      else checkRefusal(ack.id, ack.leaseId, result.error.code, `ack of ${ack.id}`);
    }
    for (const job of res.body.jobs) ledger.leased(job);
    for (const job of res.body.jobs) {
      const output: Output = { n: job.input.n, attempt: job.attempt };
      if (job.input.n % 2 === 1) {
        acks.push({ id: job.id, leaseId: job.leaseId, output: { ...output } });
        continue;
      }
      let done: Answer<{ error?: { code: string } }>;
      try {
        done = await api(p.baseUrl, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output });
      } catch (err) {
        await outage.survive(err);
        break; // the rest of this lease's jobs are abandoned with the killed server
      }
      if (done.status === 200) ledger.acked(job.id, job.leaseId, output, "route");
      else checkRefusal(job.id, job.leaseId, done.body.error?.code ?? `HTTP ${done.status}`, `complete of ${job.id}`);
    }
  }
}

export interface Delivery {
  headers: Record<string, string>;
  body: string;
  answered: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** From now on, answer 200 (until then every delivery gets 503, so it stays pending in the outbox). */
  accept(): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let accepting = false;
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      const answered = accepting ? 200 : 503;
      deliveries.push({ headers: flatHeaders(req.headers), body, answered });
      res.statusCode = answered;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    accept: () => (accepting = true),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
}
