/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` +
 * base64 key bytes; the signature is `v1,` + base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")).
 */
import { createHmac, randomBytes } from "node:crypto";

const prefix = "whsec_";
/** The spec's minimum: "Random. At least 24 bytes". */
export const webhookSecretMinBytes = 24;

/**
 * What is wrong with a secret, or undefined when receivers can load it. Strict standard base64
 * (padded, canonical): Buffer's decoder skips characters it doesn't know and reads base64url, so
 * a secret it accepts may be one that the `standardwebhooks` libraries refuse, or decode to
 * other bytes, and then no receiver verifies a single delivery.
 */
export function webhookSecretProblem(secret: string): string | undefined {
  if (!secret.startsWith(prefix)) return "it must start with whsec_";
  const encoded = secret.slice(prefix.length);
  const key = Buffer.from(encoded, "base64");
  if (key.toString("base64") !== encoded) return "what follows whsec_ must be standard base64 (A–Z, a–z, 0–9, + and /, padded with =)";
  if (key.length < webhookSecretMinBytes) return `its key is ${key.length} bytes; Standard Webhooks requires at least ${webhookSecretMinBytes}`;
  return undefined;
}

export function webhookSecretKey(secret: string): Buffer {
  const problem = webhookSecretProblem(secret);
  if (problem !== undefined) throw new Error(`invalid webhook secret: ${problem}`);
  return Buffer.from(secret.slice(prefix.length), "base64");
}

export function generateWebhookSecret(): string {
  return prefix + randomBytes(32).toString("base64");
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): SignedHeaders {
  const signature = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds), "webhook-signature": `v1,${signature}` };
}
