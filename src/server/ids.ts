/**
 * The production id source: UUID v7 message ids and unguessable receipt tokens. Random bytes are
 * drawn in blocks, so a receive of ten doesn't make ten system calls.
 *
 * Why v7 (RFC 9562: a 48-bit millisecond timestamp, then 74 random bits) rather than SQS's v4:
 * message ids are also job ids, and `jobs.id` is a unique index. Random v4 keys land on a random
 * leaf of that index, so every submit dirties a page of its own that the next commit writes to
 * the WAL; time-ordered keys append at the index's tail, where a commit's submits share pages
 * (less CPU and system time per job, more so once the index outgrows the page cache). 74 random bits keep ids unguessable. SDKs treat MessageId as an opaque string
 * (docs/sqs-compatibility.md, deliberate differences).
 */
import { randomBytes } from "node:crypto";
import type { IdSource } from "../core/index.js";

const tokenBytes = 12;
/** Random bytes in a v7 UUID's 16: everything but the 6-byte timestamp. */
const uuidRandomBytes = 10;
const poolBytes = 3_072;

export interface CryptoIdSourceOptions {
  /** The v7 timestamp; the system clock unless a test pins it. */
  nowMs?: () => number;
}

export function cryptoIdSource(options: CryptoIdSourceOptions = {}): IdSource {
  const nowMs = options.nowMs ?? Date.now;
  let pool = randomBytes(poolBytes);
  let offset = 0;
  const take = (n: number): number => {
    if (offset + n > poolBytes) {
      pool = randomBytes(poolBytes);
      offset = 0;
    }
    const at = offset;
    offset += n;
    return at;
  };
  const uuid = Buffer.alloc(16);
  return {
    messageId() {
      uuid.writeUIntBE(nowMs(), 0, 6);
      // take() first: it may replace the pool, which `pool.copy(…, take(…))` would read before.
      const at = take(uuidRandomBytes);
      pool.copy(uuid, 6, at, at + uuidRandomBytes);
      uuid[6] = (uuid[6]! & 0x0f) | 0x70; // version 7
      uuid[8] = (uuid[8]! & 0x3f) | 0x80; // variant 10 (RFC 9562)
      const hex = uuid.toString("hex");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
    receiptToken() {
      const at = take(tokenBytes);
      return pool.toString("base64url", at, at + tokenBytes);
    },
  };
}
