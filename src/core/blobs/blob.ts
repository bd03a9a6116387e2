/**
 * Attachments' bytes as core sees them: a blob's record (its bytes live in a BlobStorage, never in
 * the store), the names jobs give them, and the shape a job keeps of each.
 */
import { fail } from "../errors.js";
import { limits } from "../limits.js";

export interface BlobRecord {
  id: string;
  /** "" for the server's own account, as QueueRecord.account. */
  account: string;
  contentType: string;
  createdAtMs: number;
  /** Set once the bytes are stored, with their size and SHA-256 (lowercase hex). */
  uploadedAtMs?: number;
  size?: number;
  sha256?: string;
  /** The job that holds it (an input or an output attachment); absent: nothing references it yet. */
  jobId?: string;
  /** When the sweep looks at it next (deletes it, or keeps it when its job exists); absent: kept while its job is. */
  expiresAtMs?: number;
}

/** What a job keeps of an attachment: the wire shape, less the download URL made per answer. */
export interface AttachmentInfo {
  blobId: string;
  size: number;
  contentType: string;
  sha256: string;
}

const namePattern = /^[A-Za-z0-9._-]{1,64}$/;
const blobIdPattern = /^blob_[0-9a-f]{32}$/;

export function isBlobId(id: string): boolean {
  return blobIdPattern.test(id);
}

/** A blob id from an id source's UUID: its hex digits, prefixed so ids say what they name. */
export function blobIdOf(uuid: string): string {
  return `blob_${uuid.replace(/-/g, "").toLowerCase()}`;
}

/**
 * An attachments map's shape (`field`: attachments or outputAttachments): at most attachmentsMax
 * names of 1–64 [A-Za-z0-9._-], each naming a blob id; each fault named with its field.
 */
export function checkAttachmentMap(field: string, map: unknown): Array<[string, string]> {
  const max = limits.blobs.attachmentsMax;
  if (map === null || typeof map !== "object" || Array.isArray(map)) fail("ValidationFailed", `${field} must be an object of name → blob id.`);
  const entries = Object.entries(map as Record<string, unknown>);
  if (entries.length > max) fail("ValidationFailed", `${field} has ${entries.length} attachments; at most ${max} are allowed.`);
  const seen = new Set<string>();
  for (const [name, id] of entries) {
    if (!namePattern.test(name)) fail("ValidationFailed", `${field}: the name ${JSON.stringify(name)} is not 1–64 characters of [A-Za-z0-9._-].`);
    if (typeof id !== "string" || !isBlobId(id)) fail("ValidationFailed", `${field}.${name}: ${JSON.stringify(id)} is not a blob id (blob_ and 32 hex digits, from POST /v1/blobs).`);
    if (seen.has(id)) fail("ValidationFailed", `${field}.${name}: blob ${id} is attached under two names.`);
    seen.add(id);
  }
  return entries as Array<[string, string]>;
}

/** A job's attachments as stored (AttachmentInfo by name), JSON text. */
export function attachmentsJsonOf(entries: ReadonlyArray<[string, BlobRecord]>): string {
  const out: Record<string, AttachmentInfo> = {};
  for (const [name, b] of entries) out[name] = { blobId: b.id, size: b.size!, contentType: b.contentType, sha256: b.sha256! };
  return JSON.stringify(out);
}

export function parseAttachments(json: string): Record<string, AttachmentInfo> {
  return JSON.parse(json) as Record<string, AttachmentInfo>;
}
