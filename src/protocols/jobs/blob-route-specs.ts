/** The attachments routes (docs/jobs-api.md, "Attachments"), in route-specs.ts's table form. */
import { limits } from "../../core/index.js";
import { blobBytesQuery, blobParams, blobSchema, createBlobBody, createdBlobSchema, storedBlobSchema } from "./blob-schemas.js";
import { type RouteSpec, bodyErrors, error, invalid } from "./route-spec-parts.js";

const blobNotFound = error("ResourceNotFound: no such blob in the account (it expired unreferenced, or its job was pruned).");
const urlDenied = error("AccessDenied: the signature is not the server's, or the URL expired.");

export const blobRouteSpecs: RouteSpec[] = [
  {
    operationId: "createBlob",
    scopes: ["submit", "work"],
    method: "POST",
    path: "/v1/blobs",
    summary: "Make a blob for an attachment: answers its id and a presigned uploadUrl to PUT the bytes to.",
    tag: "blobs",
    body: createBlobBody,
    responses: {
      "201": { description: "Created.", schema: createdBlobSchema },
      "400": invalid("contentType"),
      "429": error("OverLimit: the account's attachments already hold its maxBlobBytes quota."),
      ...bodyErrors,
    },
  },
  {
    operationId: "getBlob",
    scopes: ["read", "submit", "work"],
    method: "GET",
    path: "/v1/blobs/{id}",
    summary: "An uploaded blob: its size, SHA-256 and a presigned downloadUrl.",
    tag: "blobs",
    params: blobParams,
    responses: { "200": { description: "The blob.", schema: blobSchema }, "400": invalid("the blob id"), "404": blobNotFound, "409": error("BlobNotUploaded: its bytes have not been PUT yet.") },
  },
  {
    operationId: "putBlobBytes",
    scopes: [],
    signedUrl: true,
    method: "PUT",
    path: "/v1/blobs/{id}/bytes",
    summary: `An uploadUrl of the fs blob storage: the bytes (at most ${limits.blobs.maxBytes}), streamed to disk. Once per blob.`,
    tag: "blobs",
    params: blobParams,
    querystring: blobBytesQuery,
    responses: {
      "200": { description: "Stored (on disk, synced, before this answer).", schema: storedBlobSchema },
      "400": invalid("the blob id, the query, or a blob uploaded already"),
      "403": urlDenied,
      "404": blobNotFound,
      "413": error(`MessageTooLong: the body is over ${limits.blobs.maxBytes} bytes (nothing kept).`),
    },
  },
  {
    operationId: "getBlobBytes",
    scopes: [],
    signedUrl: true,
    method: "GET",
    path: "/v1/blobs/{id}/bytes",
    summary: "A downloadUrl of the fs blob storage: the bytes, streamed from disk, with the blob's Content-Type.",
    tag: "blobs",
    params: blobParams,
    querystring: blobBytesQuery,
    responses: {
      "200": { description: "The bytes.", contentType: "application/octet-stream", schema: { type: "string", format: "binary" } },
      "400": invalid("the blob id or the query"),
      "403": urlDenied,
      "404": blobNotFound,
    },
  },
];
