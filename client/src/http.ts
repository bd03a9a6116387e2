/**
 * The one place the SDK talks HTTP: JSON in and out, bearer auth (and the account acted for), the server's coded errors
 * turned into SluiceApiError, and retries with backoff on transient failures (a restarting
 * server, a dropped keep-alive connection). Global fetch keeps connections alive on its own.
 */
import { type BackoffPolicy, backoffDelayMs, defaultBackoff } from "./backoff.js";
import { SluiceApiError, SluiceNetworkError } from "./errors.js";
import { type Timers, sleep } from "./timers.js";
import type { ErrorBody } from "./wire.js";

/**
 * Node's global fetch, or anything shaped like it. Of the Response the SDK reads `status`, `ok`,
 * `headers`, `text()` and, for streamed (NDJSON) answers, `body` — which may be a WHATWG
 * ReadableStream or any async iterable of byte chunks (a Node Readable, say), since it is read
 * with `for await`.
 */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpOptions {
  url: string;
  token?: string;
  /** Sent as `Sluice-Account` on every request. */
  account?: string;
  fetch?: FetchLike;
  timers: Timers;
  random?: () => number;
  backoff?: BackoffPolicy;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** Aborts the request (and any retry wait); the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Attempts in all, the first included; only transient failures are retried. */
  maxAttempts?: number;
  /** Gives up on one attempt after this long (long polls add their own wait to it). */
  timeoutMs?: number;
}

export interface HttpResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** Statuses that mean "try again shortly", not "your request is wrong". */
const transientStatuses = new Set([408, 429, 502, 503, 504]);

export class HttpClient {
  readonly baseUrl: string;
  private readonly fetchImpl: FetchLike;
  private readonly random: () => number;
  private readonly backoff: BackoffPolicy;

  constructor(private readonly opts: HttpOptions) {
    this.baseUrl = opts.url.replace(/\/+$/, "");
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init));
    this.random = opts.random ?? Math.random;
    this.backoff = opts.backoff ?? defaultBackoff;
  }

  async request<T>(method: string, path: string, ro: RequestOptions = {}): Promise<HttpResponse<T>> {
    // An already-aborted signal never fires its abort event: without this the request would go out.
    ro.signal?.throwIfAborted();
    const maxAttempts = ro.maxAttempts ?? 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(method, path, ro);
      } catch (err) {
        if (ro.signal?.aborted) throw ro.signal.reason;
        if (!isTransient(err) || attempt >= maxAttempts) throw publicError(err);
        const retryAfterMs = err instanceof TransientStatusError ? err.retryAfterMs : undefined;
        await sleep(this.opts.timers, retryAfterMs ?? backoffDelayMs(attempt - 1, this.backoff, this.random), ro.signal);
        if (ro.signal?.aborted) throw ro.signal.reason;
      }
    }
  }

  get timers(): Timers {
    return this.opts.timers;
  }

  /**
   * How long to wait before attempt `attempt + 1` of a call that failed transiently with `err`:
   * what its answer's Retry-After asked for, as request() waits, else the full-jitter backoff.
   */
  retryDelayMs(attempt: number, err?: unknown): number {
    const asked = typeof err === "object" && err !== null ? retryAfterOfError.get(err) : undefined;
    return asked ?? backoffDelayMs(attempt - 1, this.backoff, this.random);
  }

  /**
   * One attempt at a request whose answer is NDJSON: each line is parsed and handed to `onLine`
   * as it arrives. Not retried here — lines already handed over can't be taken back, so the
   * caller decides what to resend (isRetryable tells it whether it may).
   */
  async requestLines(method: string, path: string, ro: RequestOptions, onLine: (value: unknown) => void): Promise<void> {
    return this.requestStream(method, path, ro, "application/x-ndjson", (res) => readLines(res, onLine));
  }

  /** One attempt at a streamed answer (NDJSON, Server-Sent Events), read by `read` as it arrives. Not retried here. */
  async requestStream(method: string, path: string, ro: RequestOptions, accept: string, read: (res: Response) => Promise<void>): Promise<void> {
    ro.signal?.throwIfAborted();
    try {
      await this.once(method, path, ro, accept, async (res) => {
        await read(res);
        return { status: res.status, headers: res.headers, body: undefined };
      });
    } catch (err) {
      if (ro.signal?.aborted) throw ro.signal.reason;
      throw publicError(err);
    }
  }

  /**
   * One request to an absolute URL — a blob's presigned upload or download URL, perhaps another
   * host (S3): no Sluice credentials, the body sent as it is (a stream included). Resolves with a
   * 2xx Response whose body the caller reads; otherwise throws as request() does. Not retried. The
   * answer's head must come within `headTimeoutMs` (null: no limit — an upload's answer comes only
   * after its whole body); the answer's body may take as long as it takes.
   */
  async fetchUrl(method: string, url: string, init: { body?: RequestInit["body"]; headers?: Record<string, string>; signal?: AbortSignal; headTimeoutMs?: number | null } = {}): Promise<Response> {
    init.signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    const headTimeoutMs = init.headTimeoutMs === undefined ? 30_000 : init.headTimeoutMs;
    const cancelTimeout =
      headTimeoutMs === null
        ? () => {}
        : this.opts.timers.schedule(headTimeoutMs, () => {
            timedOut = true;
            controller.abort();
          });
    const onCallerAbort = (): void => controller.abort(init.signal?.reason);
    init.signal?.addEventListener("abort", onCallerAbort, { once: true });
    const where = `${method} ${url.split("?")[0]}`;
    let res: Response;
    try {
      // duplex: a streamed body must say it (Node's fetch refuses one otherwise); DOM's RequestInit lacks the field.
      res = await this.fetchImpl(url, { method, headers: init.headers, body: init.body, signal: controller.signal, duplex: "half" } as RequestInit);
    } catch (cause) {
      init.signal?.removeEventListener("abort", onCallerAbort);
      if (init.signal?.aborted) throw init.signal.reason;
      throw new SluiceNetworkError(`${where} ${timedOut ? "timed out" : "failed"}: ${describeCause(cause)}`, { cause });
    } finally {
      cancelTimeout();
    }
    if (res.ok) return res;
    init.signal?.removeEventListener("abort", onCallerAbort);
    const text = await res.text().catch(() => "");
    throw toApiError(res.status, text);
  }

  /** One attempt; a successful answer is read by `read` when given (a stream), else parsed as JSON. */
  private async once<T>(method: string, path: string, ro: RequestOptions, accept = "application/json", read?: (res: Response) => Promise<HttpResponse<T>>): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { accept, ...ro.headers };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    if (this.opts.account !== undefined) headers["sluice-account"] = this.opts.account;
    let body: string | undefined;
    if (ro.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(ro.body);
    }
    // One controller per attempt: the caller's signal and this attempt's timeout both abort it.
    const controller = new AbortController();
    let timedOut = false;
    const cancelTimeout = this.opts.timers.schedule(ro.timeoutMs ?? 30_000, () => {
      timedOut = true;
      controller.abort();
    });
    // The timeout goes with the caller's abort: a streamed body's read that an abort leaves
    // pending forever (Node's fetch can) would otherwise keep its timer, and the process, alive.
    const onCallerAbort = (): void => {
      cancelTimeout();
      controller.abort(ro.signal?.reason);
    };
    ro.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      let res: Response;
      try {
        res = await this.fetchImpl(this.baseUrl + path + queryString(ro.query), { method, headers, body, signal: controller.signal });
      } catch (cause) {
        if (ro.signal?.aborted) throw ro.signal.reason;
        const what = timedOut ? "timed out" : "failed";
        throw new SluiceNetworkError(`${method} ${path} ${what}: ${describeCause(cause)}`, { cause });
      }
      const lost = (cause: unknown): never => {
        if (ro.signal?.aborted) throw ro.signal.reason;
        throw new SluiceNetworkError(`${method} ${path}: response body ${timedOut ? "timed out" : "lost"}: ${describeCause(cause)}`, { cause });
      };
      if (res.ok && read) return await read(res).catch(lost);
      const text = await res.text().catch(lost);
      if (res.ok) return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
      const apiError = toApiError(res.status, text);
      if (transientStatuses.has(res.status)) throw new TransientStatusError(apiError, retryAfterMs(res.headers));
      throw apiError;
    } finally {
      cancelTimeout();
      ro.signal?.removeEventListener("abort", onCallerAbort);
    }
  }
}

/** Whether a failed request may be sent again: the server was unreachable, or said "try again shortly". */
export function isRetryable(err: unknown): boolean {
  return err instanceof SluiceNetworkError || (err instanceof SluiceApiError && transientStatuses.has(err.status));
}

/** Feeds each complete line of an NDJSON body to `onLine`, as the chunks arrive. */
async function readLines(res: Response, onLine: (value: unknown) => void): Promise<void> {
  await readTextLines(res, (line) => {
    if (line.trim()) onLine(JSON.parse(line));
  });
}

/** Feeds each line of a text body to `onLine` (without its line break), as the chunks arrive. */
export async function readTextLines(res: Response, onLine: (line: string) => void): Promise<void> {
  if (!res.body) {
    // A fetch without streaming bodies: the lines arrive all at once, at the end.
    for (const line of (await res.text()).split(/\r\n|\r|\n/)) onLine(line);
    return;
  }
  const decoder = new TextDecoder();
  let buffered = "";
  // for await, not getReader(): it reads a WHATWG stream and a Node Readable alike (FetchLike).
  for await (const value of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(value, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      newline = buffered.indexOf("\n");
    }
  }
  buffered += decoder.decode();
  if (buffered) onLine(buffered);
}

/** Wraps a transient API error so request() can retry it, then unwraps it if retries run out. */
class TransientStatusError extends Error {
  constructor(
    readonly apiError: SluiceApiError,
    readonly retryAfterMs: number | undefined,
  ) {
    super(apiError.message);
  }
}

function isTransient(err: unknown): boolean {
  return err instanceof SluiceNetworkError || err instanceof TransientStatusError;
}

/** The Retry-After of a transient answer, kept with the error callers see (for callers that resend themselves). */
const retryAfterOfError = new WeakMap<object, number>();

/** What callers see: never the private wrapper. */
function publicError(err: unknown): unknown {
  if (!(err instanceof TransientStatusError)) return err;
  if (err.retryAfterMs !== undefined) retryAfterOfError.set(err.apiError, err.retryAfterMs);
  return err.apiError;
}

function toApiError(status: number, text: string): SluiceApiError {
  try {
    const parsed = JSON.parse(text) as Partial<ErrorBody>;
    if (parsed.error && typeof parsed.error.code === "string") {
      return new SluiceApiError(parsed.error.code, status, parsed.error.message ?? parsed.error.code);
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): fall through to a generic code.
  }
  return new SluiceApiError(`Http${status}`, status, text.slice(0, 500) || `HTTP ${status}`);
}

function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 60) * 1000 : undefined;
}

function queryString(query: RequestOptions["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : "";
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const code = inner && typeof inner === "object" && "code" in inner ? String((inner as { code: unknown }).code) : undefined;
    return code ? `${cause.message} (${code})` : cause.message;
  }
  return String(cause);
}
