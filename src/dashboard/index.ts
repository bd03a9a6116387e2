/**
 * The web dashboard at /ui: a single-page app (Preact + htm as ES modules, no build step) that
 * talks to the server only through its public HTTP APIs (docs/admin-api.md, docs/jobs-api.md).
 * These routes serve its files, which hold no data: they are open, and the data routes the app
 * calls need credentials like any other client's (docs/dashboard.md).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Asset, dashboardAssets, inlineScriptHashes } from "./assets.js";

/** Everything the page loads is its own; the import map is allowed by its hash. */
function securityHeaders(shell: Asset): Record<string, string> {
  const scripts = ["'self'", ...inlineScriptHashes(shell.body.toString("utf8"))].join(" ");
  return {
    "content-security-policy": `default-src 'none'; script-src ${scripts}; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, extraHeaders: Record<string, string> = {}): FastifyReply {
  // Revalidated on every load (a 304 costs one round trip): an upgraded server's files show at once.
  void reply.headers({ "content-type": asset.contentType, etag: asset.etag, "cache-control": "no-cache", vary: "accept-encoding", ...extraHeaders });
  if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
  if (asset.gzip && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")) return reply.header("content-encoding", "gzip").send(asset.gzip);
  return reply.send(asset.body);
}

export async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  const serve = async (request: FastifyRequest<{ Params: { "*"?: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const assets = await dashboardAssets();
    const path = request.params["*"] ?? "";
    const asset = assets.get(path);
    if (asset && path !== "index.html") return send(request, reply, asset);
    // A file that isn't there is a 404; any other path is a page of the app, which routes it itself.
    if (path.startsWith("assets/") || path.startsWith("vendor/")) {
      reply.callNotFound();
      return reply;
    }
    const shell = assets.get("index.html")!;
    return send(request, reply, shell, securityHeaders(shell));
  };
  app.get("/ui", { config: { auth: "open" } }, serve);
  app.get("/ui/*", { config: { auth: "open" } }, serve);
}

/**
 * A browser opening the server's address (`GET /` asking for HTML first) is sent to the
 * dashboard. SQS clients never ask for HTML: their `POST /`, and their GET query requests
 * (`GET /?Action=…`), go on to the SQS API. Answers and returns true when it redirected.
 */
export function redirectBrowserToDashboard(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== "GET" || req.url !== "/" || !/^text\/html\b/.test(req.headers.accept ?? "")) return false;
  res.writeHead(302, { location: "/ui/", "content-length": "0" });
  res.end();
  return true;
}
