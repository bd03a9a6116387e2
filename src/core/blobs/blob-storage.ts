/**
 * The port to where attachments' bytes live (fs under the data dir, or S3): core asks it for
 * URLs and facts only. Adapters live outside core (src/server/blobs); the bytes never pass
 * through core unless the storage serves its own URLs (fs), and then only as a stream.
 */

export interface BlobFacts {
  size: number;
  /** SHA-256 of the bytes, lowercase hex. */
  sha256: string;
}

/** A URL with no Sluice credentials: the signature in it is the credential. */
export interface PresignParams {
  blobId: string;
  contentType: string;
  expiresAtMs: number;
  /** How the client reached this server (`http://host:port`): where URLs the server answers itself point. */
  origin: string;
}

export interface BlobStorage {
  readonly kind: "fs" | "s3";
  uploadUrl(p: PresignParams): Promise<string>;
  downloadUrl(p: PresignParams): Promise<string>;
  /** The stored bytes' size and digest (read once to hash them where the storage keeps none); undefined when nothing is stored. */
  stat(blobId: string): Promise<BlobFacts | undefined>;
  /** Removes the bytes; nothing stored is not an error. */
  delete(blobId: string): Promise<void>;
  /** A storage whose URLs point at this server (fs) also receives and serves the bytes. */
  readonly served?: ServedBlobBytes;
}

export interface ServedBlobBytes {
  /** Whether a URL's signature is this server's for that operation, blob and expiry. */
  verify(op: "upload" | "download", blobId: string, expiresAtMs: number, signature: string): boolean;
  /** Stores a PUT's bytes as they arrive (over `maxBytes`: refused, nothing kept), measuring them on the way. */
  write(blobId: string, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<BlobFacts>;
  /** The stored bytes, read as they are sent. */
  read(blobId: string): AsyncIterable<Uint8Array>;
}
