/**
 * The production id source: UUID v4 message ids (as SQS formats them) and unguessable receipt
 * tokens. Random bytes are drawn in blocks, so a receive of ten doesn't make ten system calls.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IdSource } from "../core/ids.js";

const tokenBytes = 12;
const poolBytes = tokenBytes * 256;

export function cryptoIdSource(): IdSource {
  let pool = randomBytes(poolBytes);
  let offset = 0;
  return {
    messageId: () => randomUUID(),
    receiptToken() {
      if (offset + tokenBytes > poolBytes) {
        pool = randomBytes(poolBytes);
        offset = 0;
      }
      const token = pool.toString("base64url", offset, offset + tokenBytes);
      offset += tokenBytes;
      return token;
    },
  };
}
