/**
 * What an attachment is on the wire (AttachmentInfo) and as the SDK hands it out (Attachment):
 * kept apart from the class that downloads, so the wire types need nothing of the transfer code.
 */

/**
 * An attachment as the server shows it: the blob's facts, and where a leased job or a finished
 * job's output carries it, a `downloadUrl` (presigned: no credentials) valid until `expiresAt`.
 */
export interface AttachmentInfo {
  blobId: string;
  size: number;
  contentType: string;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  downloadUrl?: string;
  expiresAt?: string;
}

export interface ReadOptions {
  /** Aborts the download. */
  signal?: AbortSignal;
}

/** A job's attachment (`job.attachments.image`, `ctx.attachments.image`, `done.outputAttachments.result`): its facts, and its bytes a call away. */
export interface Attachment extends Readonly<AttachmentInfo> {
  /** The whole attachment; throws if its bytes are not the ones stored (size or SHA-256 differ). */
  bytes(opts?: ReadOptions): Promise<Uint8Array>;
  /** The attachment decoded as UTF-8 text. */
  text(opts?: ReadOptions): Promise<string>;
  /**
   * The bytes as they arrive (`for await (const chunk of att.stream())`, or piped on): the
   * download starts on the first read. Errors if the stream ends short of `size`.
   */
  stream(opts?: ReadOptions): ReadableStream<Uint8Array>;
  /** The wire's facts only. */
  toJSON(): AttachmentInfo;
}
