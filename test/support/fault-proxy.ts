/**
 * A fault-injecting HTTP proxy in front of a real Sluice server, shared by both SDKs' test suites
 * (the TypeScript tests start it in-process; the Python tests run fault-proxy-main.ts), so each
 * SDK is tested against the very same server behaviours (docs/sdk-wire-spec.md). Requests are
 * forwarded unchanged unless a queued fault matches; every request is logged.
 *
 * Control routes (on the proxy itself, never forwarded):
 *   POST   /__proxy/faults  {method?, path (a regular expression), body? (one for the request body), action,
 *                             status?, retryAfter?, times?}
 *   DELETE /__proxy/faults  drops the faults still queued
 *   GET    /__proxy/log     → {requests: [{method, path, at, idempotencyKey?, fault?, upstreamStatus?}]}
 *                            (`at`: ms since the proxy started; `upstreamStatus`: the server's answer, once it came)
 *   DELETE /__proxy/log     clears the log
 * Actions: "status" answers `status` (with `Retry-After: retryAfter` when given) without forwarding;
 * "drop-answer" forwards, waits for the server's whole answer, then cuts the connection (the
 * server applied the request; the client never hears it); "reset" cuts the connection at once.
 */
import { type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";

export type FaultAction = "status" | "drop-answer" | "reset";

export interface FaultSpec {
  method?: string;
  /** A regular expression matched against the request's path and query. */
  path: string;
  /** A regular expression the request's body must match too. */
  body?: string;
  action: FaultAction;
  status?: number;
  retryAfter?: string;
  /** How many matching requests it applies to (default 1). */
  times?: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  at: number;
  idempotencyKey?: string;
  fault?: FaultAction;
  /** The status the server answered, once its whole answer reached the proxy. */
  upstreamStatus?: number;
}

export interface FaultProxy {
  url: string;
  addFault(spec: FaultSpec): void;
  log(): LoggedRequest[];
  clearFaults(): void;
  clearLog(): void;
  close(): Promise<void>;
}

interface QueuedFault {
  spec: FaultSpec;
  pattern: RegExp;
  bodyPattern: RegExp | undefined;
  left: number;
}

const actions = new Set<FaultAction>(["status", "drop-answer", "reset"]);

export function parseFaultSpec(value: unknown): FaultSpec {
  const spec = value as Partial<FaultSpec> | null;
  if (typeof spec !== "object" || spec === null || typeof spec.path !== "string" || !actions.has(spec.action as FaultAction)) {
    throw new Error(`a fault needs a path pattern and an action (${[...actions].join(", ")}), got ${JSON.stringify(value)}`);
  }
  return spec as FaultSpec;
}

export async function startFaultProxy(target: string, port = 0): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  const startedAt = performance.now();
  let faults: QueuedFault[] = [];
  let requests: LoggedRequest[] = [];

  const takeFault = (method: string, path: string, body: string): FaultSpec | undefined => {
    const found = faults.find((f) => (!f.spec.method || f.spec.method === method) && f.pattern.test(path) && (!f.bodyPattern || f.bodyPattern.test(body)));
    if (!found) return undefined;
    if (--found.left <= 0) faults = faults.filter((f) => f !== found);
    return found.spec;
  };
  const addFault = (spec: FaultSpec): void => {
    faults.push({ spec, pattern: new RegExp(spec.path), bodyPattern: spec.body === undefined ? undefined : new RegExp(spec.body), left: spec.times ?? 1 });
  };

  const control = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (path === "/__proxy/log" && req.method === "GET") return answer(200, { requests });
    if (path === "/__proxy/log" && req.method === "DELETE") {
      requests = [];
      return answer(200, {});
    }
    if (path === "/__proxy/faults" && req.method === "DELETE") {
      faults = [];
      return answer(200, {});
    }
    if (path === "/__proxy/faults" && req.method === "POST") {
      try {
        addFault(parseFaultSpec(JSON.parse((await readBody(req)).toString("utf8"))));
        return answer(201, {});
      } catch (err) {
        return answer(400, { error: { code: "BadFault", message: (err as Error).message } });
      }
    }
    return answer(404, { error: { code: "NoSuchControlRoute", message: `${req.method} ${path}` } });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = req.url ?? "/";
    if (path.startsWith("/__proxy/")) return control(req, res, path);
    const method = req.method ?? "GET";
    const body = await readBody(req);
    const fault = takeFault(method, path, body.toString("utf8"));
    const key = req.headers["idempotency-key"];
    const logged: LoggedRequest = {
      method,
      path,
      at: Math.round(performance.now() - startedAt),
      ...(typeof key === "string" ? { idempotencyKey: key } : {}),
      ...(fault ? { fault: fault.action } : {}),
    };
    requests.push(logged);
    if (fault?.action === "reset") return void req.socket.destroy();
    if (fault?.action === "status") {
      const status = fault.status ?? 503;
      res.writeHead(status, { "content-type": "application/json", ...(fault.retryAfter !== undefined ? { "retry-after": fault.retryAfter } : {}) });
      return void res.end(JSON.stringify({ error: { code: status === 503 ? "ServiceUnavailable" : `Http${status}`, message: "injected by the fault proxy" } }));
    }
    forward(req, res, body, targetUrl, fault?.action === "drop-answer", logged);
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    addFault,
    log: () => requests,
    clearFaults: () => {
      faults = [];
    },
    clearLog: () => {
      requests = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, target: URL, dropAnswer: boolean, logged: LoggedRequest): void {
  const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
    if (dropAnswer) {
      // The server applies the request and answers; the client never hears it.
      void readBody(answer).then(() => {
        logged.upstreamStatus = answer.statusCode ?? 0;
        req.socket.destroy();
      });
      return;
    }
    // Streamed as it comes: a streamed (NDJSON) answer's lines reach the client as the server writes them.
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
    answer.on("end", () => (logged.upstreamStatus = answer.statusCode ?? 0));
  });
  // The server unreachable (restarting): the client sees its connection cut, as it would without the proxy.
  upstream.on("error", () => req.socket.destroy());
  upstream.end(body);
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}
