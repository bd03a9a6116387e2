/** The blob storage the configuration names (--blob-store): fs under the data dir, or an S3 bucket. */
import { join } from "node:path";
import type { BlobStorage, Clock } from "../../core/index.js";
import type { ServerConfig } from "../config.js";
import { FsBlobStorage } from "./fs-blob-storage.js";
import { S3BlobStorage } from "./s3-blob-storage.js";

/** `secret`: the server's secret material (the store's receipt secret, the same on every node), which fs URLs are signed under. */
export function openBlobStorage(config: ServerConfig, secret: Uint8Array, clock: Clock): BlobStorage & { close?(): void } {
  if (config.blobStore === "s3") {
    return new S3BlobStorage({ bucket: config.blobBucket!, endpoint: config.blobEndpoint, region: config.blobRegion, pathStyle: config.blobPathStyle }, () => clock.nowMs());
  }
  return new FsBlobStorage(join(config.dataDir, "blobs"), secret);
}
