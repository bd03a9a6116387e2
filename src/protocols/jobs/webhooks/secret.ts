/**
 * The webhook signing secret: the configured one, or one generated on first start and kept in
 * `<data-dir>/webhook-secret` (mode 0600) so that receivers keep verifying across restarts.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateWebhookSecret, webhookSecretKey } from "./signer.js";

export const webhookSecretFileName = "webhook-secret";

export async function loadWebhookSecret(p: { configured?: string; dataDir: string }): Promise<string> {
  if (p.configured !== undefined) {
    webhookSecretKey(p.configured);
    return p.configured;
  }
  const file = join(p.dataDir, webhookSecretFileName);
  try {
    const stored = (await readFile(file, "utf8")).trim();
    webhookSecretKey(stored);
    return stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const secret = generateWebhookSecret();
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: "wx" }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "EEXIST") throw err;
  });
  return (await readFile(file, "utf8")).trim();
}
