/** /openapi.json: OpenAPI 3.1 built from the route tables (route-specs.ts, admin-route-specs.ts) and their schemas. */
import { adminComponentSchemas, adminRouteSpecs } from "./admin-route-specs.js";
import { type RouteSpec, componentSchemas, routeSpecs } from "./route-specs.js";
import type { JsonSchema } from "./schemas.js";

function parameters(spec: RouteSpec): JsonSchema[] {
  const out: JsonSchema[] = [];
  const add = (where: "path" | "query" | "header", schema: JsonSchema | undefined): void => {
    const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema?.required as string[] | undefined) ?? []);
    for (const [name, s] of Object.entries(props)) {
      const { description, ...rest } = s;
      out.push({ name: where === "header" ? headerName(name) : name, in: where, required: where === "path" || required.has(name), schema: rest, ...(description ? { description } : {}) });
    }
  };
  add("path", spec.params);
  add("query", spec.querystring);
  add("header", spec.headers);
  return out;
}

function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/**
 * What any route may answer besides its own statuses: OpenAPI's `default` response. Only these
 * two (docs/errors.md): a route's own failures are listed with the route.
 */
const anyRouteError: JsonSchema = {
  description:
    "500 InternalError (a bug or an unexpected failure, logged on the server) or 503 ServiceUnavailable (the server is shutting down) or StorageFull (its disk is full): nothing was done; retry after Retry-After. Any route may answer these.",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

const errorContent = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };

/** With credentials configured (docs/security.md), every route may refuse the caller. */
const authErrors: Record<string, JsonSchema> = {
  "401": { description: "Unauthenticated: no bearer token, or one the server doesn't know (WWW-Authenticate: Bearer).", content: errorContent },
  "403": { description: "AccessDenied: the token lacks a scope this route needs.", content: errorContent },
};

/** The operator's header (docs/security.md, "Accounts"), on every route that works on one account. */
const accountHeader: JsonSchema = {
  name: "Sluice-Account",
  in: "header",
  required: false,
  schema: { type: "string", pattern: "^[0-9]{12}$" },
  description:
    "Act for this account (12 digits): its queues, jobs, events and schedules. Only tokens of the server's own account (--account-id) may name another account; any other token may name only its own (else 403 AccessDenied). Absent: the token's own account.",
};
const accountDenied = " Or: the token names another account in Sluice-Account and is not the server's own account's.";
const accountInvalid = " Or: the Sluice-Account header is not one 12-digit account id.";

export function buildOpenApiDocument(p: { version: string; serverUrl?: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const spec of [...routeSpecs, ...adminRouteSpecs]) {
    const operation: JsonSchema = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      parameters: parameters(spec),
      responses: Object.fromEntries(
        Object.entries(spec.responses).map(([status, r]) => [
          status,
          {
            description: r.description,
            ...(r.schema ? { content: { [r.contentType ?? "application/json"]: { schema: r.schema }, ...(r.alsoAs ? { [r.alsoAs.contentType]: { schema: r.alsoAs.schema } } : {}) } } : {}),
            ...(r.headers ? { headers: r.headers } : {}),
          },
        ]),
      ),
    };
    const responses = operation.responses as Record<string, JsonSchema>;
    if (spec.signedUrl) {
      Object.assign(responses, { default: anyRouteError });
      operation.description = "No bearer token: the URL's signature (as POST /v1/blobs or a job answered it) is the credential.";
      operation.security = [];
      if (spec.method === "PUT") operation.requestBody = { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } };
      (paths[spec.path] ??= {})[spec.method.toLowerCase()] = operation;
      continue;
    }
    Object.assign(responses, authErrors, { default: anyRouteError });
    if (spec.perAccount !== false) {
      (operation.parameters as JsonSchema[]).push(accountHeader);
      responses["403"] = { ...authErrors["403"], description: `${authErrors["403"]!.description as string}${accountDenied}` };
      responses["400"] = { ...responses["400"], description: `${responses["400"]!.description as string}${accountInvalid}` };
    }
    operation.description = `Needs a bearer token with the scope ${spec.scopes.join(" or ")} when credentials are configured.`;
    if (spec.body) operation.requestBody = { required: true, content: { "application/json": { schema: spec.body } } };
    if (spec.multipartBody) operation.requestBody = { required: true, content: { "multipart/form-data": { schema: spec.multipartBody } } };
    (paths[spec.path] ??= {})[spec.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Sluice jobs API", version: p.version, description: "Async jobs on Sluice queues, and the admin routes of the dashboard and CLI. See docs/jobs-api.md and docs/admin-api.md. Errors are {error:{code,message}} with codes from docs/errors.md." },
    ...(p.serverUrl ? { servers: [{ url: p.serverUrl }] } : {}),
    paths,
    components: { schemas: { ...componentSchemas, ...adminComponentSchemas }, securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "Needed once the server has credentials (docs/security.md); open otherwise." } } },
    security: [{ bearer: [] }, {}],
  };
}
