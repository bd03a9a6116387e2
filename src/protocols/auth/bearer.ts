/**
 * Bearer-token authentication for every fastify route that is not SQS (SQS requests are signed
 * with SigV4 instead: sigv4.ts). How a route says who may call it — the route's `config`:
 *
 *     app.get("/v1/things", { config: { scope: "read" } }, handler);          // any token with `read`
 *     app.post("/v1/things", { config: { scope: ["submit", "admin"] } }, h);  // either scope will do
 *     app.get("/healthz", { config: { auth: "open" } }, handler);             // no token needed
 *
 * A route with neither needs `admin`. The check runs in an onRequest hook (before the body is
 * read or parsed); the handler finds who called in `request.principal`. With no credentials
 * configured (open mode) every request is the default account with every scope. A route that
 * works on the caller's own account's queues and jobs says so (`anyAccount: true`) and takes
 * every account's tokens; any other route serves the server as a whole (backups, metrics of all
 * accounts) and takes only tokens of the server's own account (--account-id).
 */
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SluiceError } from "../../core/index.js";
import { type CredentialsSource, type Principal, type Scope, allScopes, principalOf } from "./principal.js";

export interface RouteAuthConfig {
  /** The scope a caller needs; with a list, any one of them. Default: admin. */
  scope?: Scope | readonly Scope[];
  /** "open": no token needed (health checks); "sigv4": the route authenticates itself (SQS). */
  auth?: "open" | "sigv4";
  /** The route serves the caller's own account (request.principal.accountId), so every account's tokens may call it. */
  anyAccount?: boolean;
}

declare module "fastify" {
  interface FastifyContextConfig {
    scope?: RouteAuthConfig["scope"];
    auth?: RouteAuthConfig["auth"];
    anyAccount?: RouteAuthConfig["anyAccount"];
  }
  interface FastifyRequest {
    /** Who made the request; set by the bearer hook on every route it guards. */
    principal?: Principal;
  }
}

export interface BearerAuthOptions {
  credentials: CredentialsSource;
  /** The account anonymous requests act as in open mode. */
  defaultAccountId: string;
}

export function tokenDigest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none. */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i.exec(header);
  return match ? match[1] : "";
}

function unauthenticated(reply: FastifyReply, problem: "missing" | "invalid"): never {
  // RFC 6750 §3: a request without a token gets a bare challenge, one with a bad token says so.
  void reply.header("www-authenticate", problem === "missing" ? 'Bearer realm="sluice"' : 'Bearer realm="sluice", error="invalid_token"');
  throw new SluiceError(
    "Unauthenticated",
    problem === "missing" ? "This request needs a bearer token: send Authorization: Bearer <token>." : "The bearer token is not valid (unknown, revoked or malformed).",
  );
}

function requiredScopes(config: RouteAuthConfig): readonly Scope[] {
  if (config.scope === undefined) return ["admin"];
  return typeof config.scope === "string" ? [config.scope] : config.scope;
}

/**
 * Authenticates one request; throws Unauthenticated (401) or AccessDenied (403). `anonymous` is
 * open mode's caller, made once rather than per request.
 */
export function authenticateBearer(request: FastifyRequest, reply: FastifyReply, opts: BearerAuthOptions, anonymous: Principal): Principal | undefined {
  const config = request.routeOptions.config as RouteAuthConfig;
  if (config.auth === "open" || config.auth === "sigv4") return undefined;
  const credentials = opts.credentials.current();
  if (credentials === undefined) return anonymous;
  const header = request.headers.authorization;
  const token = bearerToken(Array.isArray(header) ? header[0] : header);
  if (token === undefined) unauthenticated(reply, "missing");
  const holder = token === "" ? undefined : credentials.tokensByDigest.get(tokenDigest(token));
  if (holder === undefined) unauthenticated(reply, "invalid");
  const principal = principalOf(holder);
  const needed = requiredScopes(config);
  if (!needed.some((scope) => principal.scopes.has(scope))) {
    throw new SluiceError("AccessDenied", `The token "${principal.name}" lacks the scope this request needs (${needed.join(" or ")}).`);
  }
  // A route over the whole server (every account's data) is the server's own account's to call
  // (docs/security.md, "Accounts").
  if (config.anyAccount !== true && principal.accountId !== opts.defaultAccountId) {
    throw new SluiceError("AccessDenied", `The token "${principal.name}" belongs to account ${principal.accountId}; this route serves only the server's own account (${opts.defaultAccountId}).`);
  }
  return principal;
}

/** Guards every route registered on `app` from here on (plugins included). */
export function installBearerAuth(app: FastifyInstance, opts: BearerAuthOptions): void {
  app.decorateRequest("principal", undefined);
  const anonymous: Principal = Object.freeze({ accountId: opts.defaultAccountId, scopes: new Set(allScopes), name: "anonymous" });
  // A callback hook, not an async one: no promise per request.
  app.addHook("onRequest", (request, reply, done) => {
    let principal: Principal | undefined;
    try {
      principal = authenticateBearer(request, reply, opts, anonymous);
    } catch (err) {
      return done(err as Error);
    }
    request.principal = principal;
    done();
  });
}
