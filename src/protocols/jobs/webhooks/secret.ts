/**
 * The webhook signing secret: the configured one, or one generated on first start and kept in
 * `<data-dir>/webhook-secret` (mode 0600) so that receivers keep verifying across restarts.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateWebhookSecret, webhookSecretProblem } from "./signer.js";

export const webhookSecretFileName = "webhook-secret";

/** A secret the server must not start with; the message says which one and what to do. */
export class WebhookSecretError extends Error {
  override readonly name = "WebhookSecretError";
}

export async function loadWebhookSecret(p: { configured?: string; dataDir: string }): Promise<string> {
  if (p.configured !== undefined) {
    const problem = webhookSecretProblem(p.configured);
    if (problem !== undefined) throw new WebhookSecretError(`--webhook-secret (SLUICE_WEBHOOK_SECRET) is not a usable Standard Webhooks secret: ${problem}.`);
    return p.configured;
  }
  const file = join(p.dataDir, webhookSecretFileName);
  let stored: string | undefined;
  try {
    stored = (await readFile(file, "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (stored === undefined) {
    const secret = generateWebhookSecret();
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: "wx" }).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
    // Another process may have written it first: what is in the file is what receivers get.
    stored = (await readFile(file, "utf8")).trim();
  }
  const problem = webhookSecretProblem(stored);
  if (problem !== undefined) {
    throw new WebhookSecretError(
      `${file} is not a usable Standard Webhooks secret: ${problem}. Replace it, or delete it to have a new one generated (receivers then need the new secret), or pass --webhook-secret (SLUICE_WEBHOOK_SECRET).`,
    );
  }
  return stored;
}
