/**
 * SigV4 signing keys (HMAC chain over date, region, service), derived once per access key, day and
 * region and kept: deriving one is four HMACs, and every request of a day would repeat them.
 */
import { createHmac } from "node:crypto";
import type { AccessKey } from "./principal.js";

/** Per access key: days × regions in use. A client cycling made-up regions only evicts its own. */
const keysPerAccessKeyMax = 16;

export function hmacHex(key: Uint8Array, text: string): string {
  return createHmac("sha256", key).update(text, "utf8").digest("hex");
}

export class SigningKeys {
  /** Keyed by the AccessKey object: a credentials reload makes new ones, and their keys start afresh. */
  private readonly byKey = new WeakMap<AccessKey, Map<string, Buffer>>();

  constructor(private readonly service: string) {}

  get(key: AccessKey, dateStamp: string, region: string): Buffer {
    let derived = this.byKey.get(key);
    if (!derived) this.byKey.set(key, (derived = new Map()));
    const id = `${dateStamp}/${region}`;
    const cached = derived.get(id);
    if (cached) return cached;
    let signingKey = createHmac("sha256", `AWS4${key.secretAccessKey.reveal()}`).update(dateStamp).digest();
    for (const part of [region, this.service, "aws4_request"]) signingKey = createHmac("sha256", signingKey).update(part).digest();
    if (derived.size >= keysPerAccessKeyMax) derived.delete(derived.keys().next().value!);
    derived.set(id, signingKey);
    return signingKey;
  }
}
