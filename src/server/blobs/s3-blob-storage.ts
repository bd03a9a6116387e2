/**
 * Blob storage in an S3-compatible bucket, for many nodes: clients PUT and GET the bytes through
 * presigned URLs, straight to the bucket; the server only signs (credentials from the AWS default
 * chain) and, once, learns an upload's size and SHA-256 — from the object's stored SHA-256
 * checksum when it has one (an upload sent with x-amz-checksum-sha256), else by reading it through.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { BlobFacts, BlobStorage, PresignParams } from "../../core/index.js";

export interface S3BlobOptions {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, R2, a test server); absent: AWS's for the region. */
  endpoint?: string;
  region: string;
  /** Bucket in the path (http://host/bucket/key) rather than the host name: most S3-compatible servers want it. */
  pathStyle: boolean;
}

/** A presigned URL lives at most this long (SigV4's limit is 7 days). */
const maxUrlSeconds = 7 * 86_400;

export class S3BlobStorage implements BlobStorage {
  readonly kind = "s3" as const;
  private readonly client: S3Client;

  constructor(
    private readonly options: S3BlobOptions,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.pathStyle,
      // A presigned PUT that demanded a checksum header would be refused to clients that send none.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  async uploadUrl(p: PresignParams): Promise<string> {
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.options.bucket, Key: p.blobId }), { expiresIn: secondsUntil(p.expiresAtMs, this.nowMs()) });
  }

  async downloadUrl(p: PresignParams): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.options.bucket, Key: p.blobId, ResponseContentType: p.contentType });
    return getSignedUrl(this.client, command, { expiresIn: secondsUntil(p.expiresAtMs, this.nowMs()) });
  }

  async stat(blobId: string): Promise<BlobFacts | undefined> {
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: blobId, ChecksumMode: "ENABLED" }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const size = head.ContentLength ?? 0;
    // A whole-object SHA-256 (a multipart upload's composite one ends in -<parts>, and is not the digest of the bytes).
    const checksum = head.ChecksumSHA256;
    if (checksum !== undefined && !checksum.includes("-") && head.ChecksumType !== "COMPOSITE") return { size, sha256: Buffer.from(checksum, "base64").toString("hex") };
    const got = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: blobId }));
    const hash = createHash("sha256");
    let read = 0;
    for await (const chunk of got.Body as Readable) {
      hash.update(chunk as Buffer);
      read += (chunk as Buffer).length;
    }
    return { size: read, sha256: hash.digest("hex") };
  }

  async delete(blobId: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: blobId }));
  }

  close(): void {
    this.client.destroy();
  }
}

function secondsUntil(atMs: number, nowMs: number): number {
  return Math.min(maxUrlSeconds, Math.max(1, Math.ceil((atMs - nowMs) / 1000)));
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === "NotFound" || e.name === "NoSuchKey" || e.$metadata?.httpStatusCode === 404;
}
