/**
 * Which documented answers a test really got: `check` makes a request and records its route and
 * status (s.api already fails an answer /openapi.json does not admit); `unanswered` then lists the
 * statuses the document lists that no check got — each needs a case.
 */
import { expect } from "vitest";
import type { Json, JobsServer } from "./http-harness.js";
import { openApiProblem, operationOf } from "./openapi-answers.js";

export interface OpenApiCoverage {
  check(method: string, url: string, status: number, body?: unknown, headers?: Record<string, string>): Promise<Json>;
  /** An event stream's status and media type, checked the same way; the stream is then dropped. */
  checkStream(url: string): Promise<void>;
  /** `METHOD /path status` of every listed answer (but `default` and 401 / 403) of the operations `include` keeps, that no check got. */
  unanswered(include: (op: { tags: string[]; security?: unknown[] }) => boolean): string[];
}

export function openApiCoverage(s: JobsServer, doc: Json): OpenApiCoverage {
  const seen = new Set<string>();
  return {
    async check(method, url, status, body, headers) {
      const res = await s.api(method, url, body, headers);
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(status);
      const op = operationOf(doc, method, url)!;
      seen.add(`${op.method.toUpperCase()} ${op.path} ${status}`);
      return res.body;
    },
    async checkStream(url) {
      const controller = new AbortController();
      const res = await fetch(s.url + url, { signal: controller.signal, headers: { accept: "text/event-stream" } });
      controller.abort();
      expect(openApiProblem(doc, { method: "GET", url, status: res.status, contentType: res.headers.get("content-type"), body: "" })).toBeUndefined();
      seen.add(`GET ${operationOf(doc, "GET", url)!.path} ${res.status}`);
    },
    unanswered(include) {
      const listed = Object.entries(doc.paths as Record<string, Record<string, { responses: object; tags: string[]; security?: unknown[] }>>).flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => include(op))
          .flatMap(([method, op]) =>
            // `default` (500 / 503, any route) is checked against real answers in test/protocols/shutdown.test.ts;
            // 401 / 403 (credentials configured) on every route in test/auth/bearer.test.ts.
            Object.keys(op.responses)
              .filter((status) => status !== "default" && status !== "401" && status !== "403")
              .map((status) => `${method.toUpperCase()} ${path} ${status}`),
          ),
      );
      return listed.filter((l) => !seen.has(l));
    },
  };
}
