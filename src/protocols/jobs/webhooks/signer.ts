/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` +
 * base64 key bytes; the signature is `v1,` + base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")).
 */
import { createHmac, randomBytes } from "node:crypto";

const prefix = "whsec_";

export function webhookSecretKey(secret: string): Buffer {
  if (!secret.startsWith(prefix)) throw new Error("webhook secret must start with whsec_");
  const key = Buffer.from(secret.slice(prefix.length), "base64");
  if (key.length < 16) throw new Error("webhook secret must carry at least 16 bytes of key (base64 after whsec_)");
  return key;
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
