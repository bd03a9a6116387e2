/** What every route spec is made of (route-specs.ts, schedule-route-specs.ts): its types and the answers they share. */
import type { Scope } from "../auth/principal.js";
import type { JsonSchema } from "./schemas.js";

export interface ResponseSpec {
  description: string;
  /** A $ref name under components/schemas, or an inline schema. */
  schema?: JsonSchema;
  contentType?: string;
  /** The same answer in another media type (the request chose it, e.g. with ?wait). */
  alsoAs?: { contentType: string; schema: JsonSchema };
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export interface RouteSpec {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** OpenAPI style: /v1/jobs/{id}. */
  path: string;
  summary: string;
  tag: "jobs" | "workers" | "queues" | "schedules" | "batches" | "blobs" | "events" | "meta" | "admin";
  /** Who may call it (docs/security.md): a bearer token with any one of these scopes. */
  scopes: readonly Scope[];
  /**
   * false: the route answers alike for every account, so it ignores `Sluice-Account`. Every
   * other route works on one account's queues and jobs and honours the header (route-handler.ts).
   */
  perAccount?: false;
  params?: JsonSchema;
  querystring?: JsonSchema;
  headers?: JsonSchema;
  body?: JsonSchema;
  /** A multipart/form-data body (its fields), read by the handler as a stream: documented only, not validated by a schema. */
  multipartBody?: JsonSchema;
  /**
   * A presigned URL's route (blob bytes): no bearer token, the URL's signature is the credential;
   * the body, if any, is raw bytes streamed by the handler. Registered apart (blob-bytes-routes.ts).
   */
  signedUrl?: true;
  responses: Record<string, ResponseSpec>;
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const wrap = (key: string, schema: JsonSchema): JsonSchema => ({ type: "object", properties: { [key]: schema }, required: [key] });
export const jobResponse: ResponseSpec = { description: "The job.", schema: wrap("job", ref("Job")) };
export const error = (description: string): ResponseSpec => ({ description, schema: ref("Error") });
export const invalid = (what: string): ResponseSpec => error(`ValidationFailed: ${what}.`);
/** What every POST and PUT can answer about its body, whatever the route (a bodyless one included). */
export const bodyErrors = {
  "413": error("MessageTooLong: the request body is over 4 MiB."),
  "415": error("ValidationFailed (code): the body is not JSON — Content-Type must be application/json."),
};
export const queueDeletedRecently = error("QueueDeletedRecently: the queue would be created, but one of that name was deleted less than 60 s ago.");
