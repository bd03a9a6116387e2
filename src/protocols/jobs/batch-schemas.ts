/** The Batch API's JSON Schemas (request validation and /openapi.json), in OpenAI's shapes. */
import { batchStatuses, limits } from "../../core/index.js";
import { type JsonSchema, int, nullable, object } from "./schemas.js";

const b = limits.batches;
const unixSeconds: JsonSchema = { type: "integer", description: "Unix time in seconds." };
const maybeSeconds = nullable(unixSeconds);

export const fileParams = object({ file_id: { type: "string", minLength: 1, maxLength: 128 } }, ["file_id"]);
export const batchParams = object({ batch_id: { type: "string", minLength: 1, maxLength: 128 } }, ["batch_id"]);

export const uploadForm = object(
  {
    file: { type: "string", contentMediaType: "application/jsonl", description: `A JSONL file of {"custom_id","method","url","body"} lines: at most ${b.fileMaxBytes} bytes and ${b.fileMaxLines} lines.` },
    purpose: { type: "string", enum: ["batch"] },
  },
  ["file", "purpose"],
);

export const createBatchBody = object(
  {
    input_file_id: { type: "string", minLength: 1, maxLength: 128, description: "An uploaded file of purpose batch." },
    endpoint: { type: "string", minLength: 4, maxLength: 204, description: "Every line's url, such as /v1/chat/completions (any path under /v1/)." },
    completion_window: { type: "string", enum: ["24h"] },
    metadata: {
      ...nullable({ type: "object" }),
      additionalProperties: { type: "string", maxLength: b.metadataValueMaxLength },
      maxProperties: b.metadataMaxPairs,
      description: "Up to 16 string pairs, kept with the batch. `queue` names the queue its jobs go to (default batch).",
    },
  },
  ["input_file_id", "endpoint", "completion_window"],
);

export const listBatchesQuery: JsonSchema = {
  type: "object",
  properties: {
    after: { type: "string", minLength: 1, maxLength: 128, description: "The last id of the previous page." },
    limit: int(1, b.listMax, `Default ${b.listDefault}.`),
  },
};

export const fileSchema = object(
  {
    id: { type: "string" },
    object: { type: "string", enum: ["file"] },
    bytes: { type: "integer" },
    created_at: unixSeconds,
    filename: { type: "string" },
    purpose: { type: "string" },
    status: { type: "string", enum: ["processed"] },
    expires_at: maybeSeconds,
    status_details: nullable({ type: "string" }),
  },
  ["id", "object", "bytes", "created_at", "filename", "purpose", "status"],
);

export const deletedFileSchema = object({ id: { type: "string" }, object: { type: "string", enum: ["file"] }, deleted: { type: "boolean" } }, ["id", "object", "deleted"]);

const lineError = object({ code: { type: "string" }, message: { type: "string" }, param: nullable({ type: "string" }), line: nullable({ type: "integer" }) }, ["code", "message", "param", "line"]);

export const batchSchema = object(
  {
    id: { type: "string" },
    object: { type: "string", enum: ["batch"] },
    endpoint: { type: "string" },
    errors: { ...nullable({ type: "object" }), properties: { object: { type: "string" }, data: { type: "array", items: lineError } }, description: "Why validation failed, with the input file's line numbers." },
    input_file_id: { type: "string" },
    completion_window: { type: "string" },
    status: { type: "string", enum: [...batchStatuses] },
    output_file_id: nullable({ type: "string" }),
    error_file_id: nullable({ type: "string" }),
    created_at: unixSeconds,
    in_progress_at: maybeSeconds,
    expires_at: maybeSeconds,
    finalizing_at: maybeSeconds,
    completed_at: maybeSeconds,
    failed_at: maybeSeconds,
    expired_at: maybeSeconds,
    cancelling_at: maybeSeconds,
    cancelled_at: maybeSeconds,
    request_counts: object({ total: { type: "integer" }, completed: { type: "integer" }, failed: { type: "integer" } }, ["total", "completed", "failed"]),
    metadata: nullable({ type: "object" }),
  },
  ["id", "object", "endpoint", "errors", "input_file_id", "completion_window", "status", "output_file_id", "error_file_id", "created_at", "request_counts", "metadata"],
);

export const batchListSchema = object(
  {
    object: { type: "string", enum: ["list"] },
    data: { type: "array", items: { $ref: "#/components/schemas/Batch" } },
    first_id: nullable({ type: "string" }),
    last_id: nullable({ type: "string" }),
    has_more: { type: "boolean" },
  },
  ["object", "data", "first_id", "last_id", "has_more"],
);
