/** The attachments routes' schemas (blob-route-specs.ts) and the shapes jobs show their attachments in. */
import { limits } from "../../core/index.js";
import { blobId, dateTime, object } from "./schemas.js";

const b = limits.blobs;

export const blobParams = object({ id: blobId }, ["id"]);

export const createBlobBody = object({
  contentType: { type: "string", maxLength: b.contentTypeMaxLength, description: "The bytes' media type, e.g. image/png (default application/octet-stream)." },
});

export const blobBytesQuery = object(
  {
    expires: { type: "integer", minimum: 0, description: "When the URL expires (epoch ms), as signed." },
    signature: { type: "string", minLength: 1, maxLength: 128, description: "The server's signature of the operation, blob and expiry." },
  },
  ["expires", "signature"],
);

export const createdBlobSchema = object(
  {
    blobId,
    uploadUrl: { type: "string", description: `PUT the bytes here (at most ${b.maxBytes} bytes), with no Sluice credentials: the URL is signed.` },
    expiresAt: { ...dateTime, description: "When uploadUrl stops working." },
  },
  ["blobId", "uploadUrl", "expiresAt"],
);

/** A PUT's answer: the blob as stored. */
export const storedBlobSchema = object(
  { blobId, size: { type: "integer" }, contentType: { type: "string" }, sha256: { type: "string", description: "SHA-256 of the bytes, lowercase hex." }, createdAt: dateTime },
  ["blobId", "size", "contentType", "sha256", "createdAt"],
);

export const blobSchema = object(
  {
    blobId,
    size: { type: "integer" },
    contentType: { type: "string" },
    sha256: { type: "string", description: "SHA-256 of the bytes, lowercase hex." },
    createdAt: dateTime,
    downloadUrl: { type: "string", description: "GET the bytes here, with no Sluice credentials, until expiresAt." },
    expiresAt: dateTime,
  },
  ["blobId", "size", "contentType", "sha256", "createdAt", "downloadUrl", "expiresAt"],
);

