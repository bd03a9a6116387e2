/** The Batch API's routes (docs/jobs-api.md, "Batch API"): OpenAI's files and batches paths, in route-specs.ts's table form. */
import { limits } from "../../core/index.js";
import { batchListSchema, batchParams, createBatchBody, fileParams, listBatchesQuery, uploadForm } from "./batch-schemas.js";
import { type RouteSpec, error, invalid, ref } from "./route-spec-parts.js";

const fileAnswer = { description: "The file object.", schema: ref("File") };
const batchAnswer = { description: "The batch object.", schema: ref("Batch") };
const fileNotFound = error("ResourceNotFound: no such file in the account.");
const batchNotFound = error("ResourceNotFound: no such batch in the account.");
const readScopes = ["read", "submit", "admin"] as const;
const writeScopes = ["submit", "admin"] as const;

export const batchRouteSpecs: RouteSpec[] = [
  {
    operationId: "uploadFile",
    scopes: writeScopes,
    method: "POST",
    path: "/v1/files",
    summary: "Upload a batch input file (multipart/form-data, fields file and purpose=batch), streamed into the store.",
    tag: "batches",
    multipartBody: uploadForm,
    responses: {
      "200": fileAnswer,
      "400": invalid(`purpose missing or not batch, no file part, a file over ${limits.batches.fileMaxBytes} bytes or ${limits.batches.fileMaxLines} lines (as OpenAI answers them), or a body that is not multipart/form-data`),
    },
  },
  {
    operationId: "getFile",
    scopes: readScopes,
    method: "GET",
    path: "/v1/files/{file_id}",
    summary: "A file object.",
    tag: "batches",
    params: fileParams,
    responses: { "200": fileAnswer, "400": invalid("the file id"), "404": fileNotFound },
  },
  {
    operationId: "getFileContent",
    scopes: readScopes,
    method: "GET",
    path: "/v1/files/{file_id}/content",
    summary: "A file's bytes, streamed chunk by chunk.",
    tag: "batches",
    params: fileParams,
    responses: { "200": { description: "The file's bytes.", contentType: "application/octet-stream", schema: { type: "string" } }, "400": invalid("the file id"), "404": fileNotFound },
  },
  {
    operationId: "deleteFile",
    scopes: writeScopes,
    method: "DELETE",
    path: "/v1/files/{file_id}",
    summary: "Delete a file and its bytes.",
    tag: "batches",
    params: fileParams,
    responses: { "200": { description: "Deleted.", schema: ref("DeletedFile") }, "400": invalid("the file id"), "404": fileNotFound },
  },
  {
    operationId: "createBatch",
    scopes: writeScopes,
    method: "POST",
    path: "/v1/batches",
    summary: "Create a batch: every line of the input file becomes a job on the queue metadata.queue (default batch).",
    tag: "batches",
    body: createBatchBody,
    responses: { "200": batchAnswer, "400": invalid("the body, the endpoint, the metadata or the queue name"), "404": fileNotFound },
  },
  {
    operationId: "listBatches",
    scopes: readScopes,
    method: "GET",
    path: "/v1/batches",
    summary: "The account's batches, newest first.",
    tag: "batches",
    querystring: listBatchesQuery,
    responses: { "200": { description: "A page of batches.", schema: batchListSchema }, "400": invalid("after or limit") },
  },
  {
    operationId: "getBatch",
    scopes: readScopes,
    method: "GET",
    path: "/v1/batches/{batch_id}",
    summary: "A batch object, with its request counts.",
    tag: "batches",
    params: batchParams,
    responses: { "200": batchAnswer, "400": invalid("the batch id"), "404": batchNotFound },
  },
  {
    operationId: "cancelBatch",
    scopes: writeScopes,
    method: "POST",
    path: "/v1/batches/{batch_id}/cancel",
    summary: "Cancel a batch: cancelling, its queued jobs canceled (running ones asked to stop), then cancelled with the results so far.",
    tag: "batches",
    params: batchParams,
    responses: { "200": batchAnswer, "400": invalid("the batch id"), "404": batchNotFound, "409": error("JobAlreadyFinished: the batch is finalizing or done.") },
  },
];
