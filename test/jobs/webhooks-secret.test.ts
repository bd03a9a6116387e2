/**
 * The webhook signing secret: the server starts only with one that Standard Webhooks receivers can
 * load and that meets the spec's 24-byte minimum, and says which setting to fix when it can't.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { generateWebhookSecret, signWebhook, webhookSecretKey } from "../../src/protocols/jobs/webhooks/signer.js";
import { ConfigError, startServer } from "../../src/server/index.js";
import { configFromEnv, resolveServerConfig } from "../../src/server/config.js";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { testWebhookSecret } from "./http-harness.js";

afterEach(async () => {
  await killAllChildren();
  await removeTempDirs();
});

const key = (bytes: number): Buffer => Buffer.from(Array.from({ length: bytes }, (_, i) => (i * 37 + 11) & 0xff));

const refused: Record<string, string> = {
  "16 bytes (the old minimum)": `whsec_${key(16).toString("base64")}`,
  "20 bytes": `whsec_${key(20).toString("base64")}`,
  "characters outside base64": "whsec_not*valid*base64*at*all*but*long*enough!!",
  "base64url": `whsec_${Buffer.from("fb0f3ea0ffbbfe7d1a2b3c4d5e6f708192a3b4c5d6e7f809", "hex").toString("base64url")}`,
  "unpadded base64": `whsec_${key(25).toString("base64").replace(/=+$/, "")}`,
  "a space inside": `whsec_${key(24).toString("base64").slice(0, 8)} ${key(24).toString("base64").slice(8)}`,
  "no key": "whsec_",
  "no whsec_ prefix": key(32).toString("base64"),
};

/** A delivery signed by the server's signer verifies with the standardwebhooks package and the same secret. */
function verifiesWithStandardWebhooks(secret: string): boolean {
  const body = '{"type":"job.succeeded"}';
  const headers = signWebhook(webhookSecretKey(secret), "msg_1", Math.floor(Date.now() / 1000), body);
  return new Webhook(secret).verify(body, { ...headers }) !== undefined;
}

describe("webhook secret", () => {
  it.each(Object.entries(refused))("refuses %s, naming --webhook-secret and SLUICE_WEBHOOK_SECRET", (_, secret) => {
    for (const layer of [{ webhookSecret: secret }, configFromEnv({ SLUICE_WEBHOOK_SECRET: secret })]) {
      let error: unknown;
      try {
        resolveServerConfig(layer);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/--webhook-secret \(SLUICE_WEBHOOK_SECRET\) is not a usable Standard Webhooks secret/);
    }
  });

  it("accepts the test suite's secret, generated ones and a 64-byte one, each verified by the standardwebhooks package", () => {
    const accepted = [testWebhookSecret, `whsec_${key(24).toString("base64")}`, `whsec_${key(64).toString("base64")}`, ...Array.from({ length: 20 }, generateWebhookSecret)];
    for (const secret of accepted) {
      expect(resolveServerConfig({ webhookSecret: secret }).webhookSecret).toBe(secret);
      expect(verifiesWithStandardWebhooks(secret), secret).toBe(true);
    }
    expect(webhookSecretKey(testWebhookSecret)).toHaveLength(24);
  });

  it("the secret a server generates in its data dir is one receivers can load", async () => {
    const dataDir = await makeTempDir("sluice-secret-");
    const server = await startServer({ port: 0, dataDir });
    await server.close();
    const stored = (await readFile(join(dataDir, "webhook-secret"), "utf8")).trim();
    expect(verifiesWithStandardWebhooks(stored)).toBe(true);
  });

  it("a bad secret in <data-dir>/webhook-secret stops the start, naming the file", async () => {
    const dataDir = await makeTempDir("sluice-secret-");
    await writeFile(join(dataDir, "webhook-secret"), `${refused["16 bytes (the old minimum)"]}\n`);
    await expect(startServer({ port: 0, dataDir })).rejects.toThrow(ConfigError);
    await expect(startServer({ port: 0, dataDir })).rejects.toThrow(`${join(dataDir, "webhook-secret")} is not a usable Standard Webhooks secret: its key is 16 bytes`);
  });

  it("sluice serve --webhook-secret <bad> exits with the reason, not a stack trace", async () => {
    const dataDir = await makeTempDir("sluice-secret-");
    const started = spawnCli({ dataDir, extraArgs: ["--webhook-secret", refused["base64url"]!] });
    await expect(started).rejects.toThrow(/code 2[\s\S]*--webhook-secret \(SLUICE_WEBHOOK_SECRET\) is not a usable Standard Webhooks secret: what follows whsec_ must be standard base64/);
  });
});
