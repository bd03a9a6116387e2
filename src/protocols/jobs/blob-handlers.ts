/**
 * The attachments routes' handlers (blob-route-specs.ts): core's BlobService, and the bytes of the
 * fs storage's presigned URLs streamed straight between the socket and the disk.
 */
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type BlobService, type BlobView, type JobRecord, fail, limits } from "../../core/index.js";
import { isoTime } from "./iso-time.js";
import type { Handler, Request } from "./route-handler.js";

type SendJson = (reply: FastifyReply, status: number, json: string) => FastifyReply;

/** How the client reached this server: where the URLs the server serves itself (fs storage) point. */
export function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? "localhost"}`;
}

function blobJson(v: BlobView): string {
  const b = v.blob;
  return JSON.stringify({ blobId: b.id, size: b.size, contentType: b.contentType, sha256: b.sha256, createdAt: isoTime(b.createdAtMs), downloadUrl: v.downloadUrl, expiresAt: isoTime(v.expiresAtMs) });
}

export function blobHandlers(maybeBlobs: BlobService | undefined, sendJson: SendJson): Record<string, Handler> {
  const service = (): BlobService => maybeBlobs ?? fail("RouteNotFound", "This server stores no attachments.");
  return {
    async createBlob(request, reply) {
      const blobs = service();
      const made = await blobs.create(request.storeAccount, request.body as { contentType?: string }, originOf(request));
      return sendJson(reply, 201, JSON.stringify({ blobId: made.blob.id, uploadUrl: made.uploadUrl, expiresAt: isoTime(made.expiresAtMs) }));
    },
    async getBlob(request, reply) {
      const blobs = service();
      return sendJson(reply, 200, blobJson(await blobs.get(request.storeAccount, request.params.id!, originOf(request))));
    },
  };
}

export function hasAttachments(job: JobRecord): boolean {
  return job.attachmentsJson !== undefined || job.outputAttachmentsJson !== undefined;
}

/**
 * Download URLs for a job's attachments, by blob id: for a lease valid while it is (at least the
 * URL lifetime of GET), for GET /v1/jobs/{id} the URL lifetime. None for a job without attachments.
 */
export async function jobDownloadUrls(blobs: BlobService | undefined, job: JobRecord, request: FastifyRequest, nowMs: number): Promise<Map<string, string> | undefined> {
  if (!blobs || !hasAttachments(job)) return undefined;
  const expiresAtMs = Math.max(nowMs + limits.blobs.urlSeconds * 1000, job.leaseExpiresAtMs ?? 0);
  return blobs.downloadUrls(job, originOf(request), expiresAtMs);
}

interface BytesRequest {
  params: { id: string };
  query: { expires: number; signature: string };
}

/**
 * The fs storage's upload and download URLs, in a plugin of their own: any Content-Type is taken
 * as raw bytes (read by the handler as a stream, never parsed or buffered), and no bearer token is
 * asked for — the signature in the URL is the credential.
 */
export function blobBytesRoutes(blobs: BlobService, sendJson: SendJson, schemas: { params: object; querystring: object }) {
  return async (app: FastifyInstance): Promise<void> => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
    const config = { auth: "open" as const };
    app.put("/v1/blobs/:id/bytes", { config, schema: schemas }, async (request, reply) => {
      const r = request as unknown as Request & BytesRequest;
      const declared = request.headers["content-length"];
      const stored = await blobs.receive({
        blobId: r.params.id,
        expiresAtMs: r.query.expires,
        signature: r.query.signature,
        declaredBytes: declared === undefined ? undefined : Number(declared),
        body: request.raw,
      });
      return sendJson(reply, 200, JSON.stringify({ blobId: stored.id, size: stored.size, contentType: stored.contentType, sha256: stored.sha256, createdAt: isoTime(stored.createdAtMs) }));
    });
    app.get("/v1/blobs/:id/bytes", { config, schema: schemas }, async (request, reply) => {
      const r = request as unknown as Request & BytesRequest;
      const { blob, bytes } = await blobs.open({ blobId: r.params.id, expiresAtMs: r.query.expires, signature: r.query.signature });
      void reply.code(200).header("content-type", blob.contentType).header("content-length", String(blob.size)).header("x-sluice-sha256", blob.sha256);
      return reply.send(bytes instanceof Readable ? bytes : Readable.from(bytes, { objectMode: false }));
    });
  };
}
