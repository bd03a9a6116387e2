/**
 * The credentials file: TOML, JSON and YAML read alike; mistakes named without quoting a secret;
 * reloads (SIGHUP's reload() and a change of the file) that swap credentials without a restart
 * and keep the old ones when the new file is broken.
 */
import { writeFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { Secret } from "../../src/protocols/auth/principal.js";
import { CredentialsError, loadCredentials } from "../../src/server/credentials-file.js";
import { CredentialsHolder } from "../../src/server/credentials-reload.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { accountA, credentialsToml, keys, tokens, writeCredentials } from "./fixtures.js";

afterAll(removeTempDirs);

const doc = { keys: Object.values(keys), tokens: Object.values(tokens) };
const defaultAccount = "000000000000";

describe("credentials file", () => {
  it("reads the same credentials from TOML, JSON and YAML", async () => {
    const dir = await makeTempDir();
    const files = [
      await writeCredentials(dir, "c.toml", credentialsToml()),
      await writeCredentials(dir, "c.json", JSON.stringify(doc)),
      await writeCredentials(dir, "c.yaml", toYaml(doc)),
    ];
    for (const file of files) {
      const c = await loadCredentials(file, {}, defaultAccount);
      expect([...c.accessKeys.keys()].sort(), file).toEqual(Object.values(keys).map((k) => k.accessKeyId).sort());
      expect(c.tokensByDigest.size).toBe(Object.keys(tokens).length);
      const sender = c.accessKeys.get(keys.sender.accessKeyId)!;
      expect([...sender.scopes]).toEqual(["submit"]);
      expect(sender.accountId).toBe(accountA);
      expect(c.accessKeys.get(keys.session.accessKeyId)!.sessionToken?.reveal()).toBe(keys.session.sessionToken);
      expect([...c.accessKeys.get(keys.admin.accessKeyId)!.scopes].sort()).toEqual(["admin", "read", "submit", "work"]);
    }
  });

  it("adds the environment's single key and token, for the default account with every scope", async () => {
    const c = await loadCredentials(undefined, { accessKeyId: "AKIDENV", secretAccessKey: new Secret("env-secret-0123456789"), apiToken: new Secret("env-token-0123456789") }, defaultAccount);
    expect(c.accessKeys.get("AKIDENV")?.accountId).toBe(defaultAccount);
    expect(c.tokensByDigest.size).toBe(1);
  });

  it("names each mistake without quoting any secret", async () => {
    const dir = await makeTempDir();
    const secret = "a-secret-that-must-not-leak-123";
    const cases: Array<[string, string, RegExp]> = [
      ["typo.toml", `[[keys]]\naccessKeyId = "AKID1"\nsecretAcessKey = "${secret}"\n`, /unknown field "secretAcessKey"/],
      ["short.json", JSON.stringify({ tokens: [{ token: "short" }] }), /at least 16 characters/],
      ["scope.yaml", toYaml({ tokens: [{ token: secret, scopes: ["write"] }] }), /scopes must be a non-empty list/],
      ["dup.json", JSON.stringify({ keys: [{ accessKeyId: "AKID1", secretAccessKey: secret }, { accessKeyId: "AKID1", secretAccessKey: secret }] }), /listed twice/],
      ["account.toml", `[[keys]]\naccessKeyId = "AKID1"\nsecretAccessKey = "${secret}"\naccountId = "12"\n`, /accountId must be 12 digits/],
      ["broken.toml", `[[keys]]\naccessKeyId = "AKID1"\nsecretAccessKey = "${secret}\n`, /is not valid TOML/],
      ["empty.json", "{}", /lists no access key and no token/],
      ["creds.ini", "x", /must end in \.toml, \.json, \.yaml or \.yml/],
    ];
    for (const [name, text, expected] of cases) {
      const error = await loadCredentials(await writeCredentials(dir, name, text), {}, defaultAccount).then(() => undefined, (err: unknown) => err);
      expect(error, name).toBeInstanceOf(CredentialsError);
      expect((error as Error).message, name).toMatch(expected);
      expect((error as Error).message, name).not.toContain(secret);
    }
    await expect(loadCredentials(join(dir, "missing.toml"), {}, defaultAccount)).rejects.toThrow(/no such file/);
  });

  it("never prints a secret: inspect, JSON and templates show [redacted]", async () => {
    const c = await loadCredentials(await writeCredentials(await makeTempDir()), {}, defaultAccount);
    const key = c.accessKeys.get(keys.admin.accessKeyId)!;
    for (const text of [inspect(c, { depth: 10 }), JSON.stringify([...c.accessKeys.values()]), `${key.secretAccessKey}`]) {
      expect(text).not.toContain(keys.admin.secretAccessKey);
      expect(text).toContain("[redacted]");
    }
  });
});

describe("reloading", () => {
  function events(): { log: string[]; next(): Promise<string>; onReloaded(s: { keys: number; tokens: number }): void; onReloadFailed(m: string): void } {
    const log: string[] = [];
    let wake: (() => void) | undefined;
    const push = (line: string): void => {
      log.push(line);
      wake?.();
    };
    return {
      log,
      onReloaded: (s) => push(`reloaded ${s.keys} ${s.tokens}`),
      onReloadFailed: (m) => push(`failed ${m}`),
      next: () => {
        const seen = log.length;
        return new Promise<string>((resolve) => {
          wake = () => {
            if (log.length > seen) resolve(log[log.length - 1]!);
          };
        });
      },
    };
  }

  it("swaps credentials on reload(), and keeps the last good ones when the file is broken", async () => {
    const dir = await makeTempDir();
    const file = await writeCredentials(dir, "c.json", JSON.stringify({ tokens: [{ token: "first-token-0123456789" }] }));
    const ev = events();
    const holder = await CredentialsHolder.open({ file, env: {}, defaultAccountId: defaultAccount, events: ev });
    const first = holder.current()!;
    await writeFile(file, JSON.stringify({ tokens: [{ token: "second-token-0123456789" }, { token: "third-token-0123456789" }] }));
    await holder.reload();
    expect(ev.log.at(-1)).toBe("reloaded 0 2");
    expect(holder.current()).not.toBe(first);
    const second = holder.current();
    await writeFile(file, "{ broken");
    await holder.reload();
    expect(ev.log.at(-1)).toMatch(/^failed .*is not valid JSON/);
    expect(holder.current()).toBe(second);
    holder.close();
  });

  it("reloads by itself when the file is replaced (as editors and config tools do: write, then rename)", async () => {
    const dir = await makeTempDir();
    const file = await writeCredentials(dir, "c.yaml", toYaml({ tokens: [{ token: "before-token-0123456789" }] }));
    const ev = events();
    const holder = await CredentialsHolder.open({ file, env: {}, defaultAccountId: defaultAccount, events: ev });
    holder.watchFile();
    const reloaded = ev.next();
    await writeFile(join(dir, "c.yaml.new"), toYaml({ tokens: [{ token: "after-token-0123456789" }, { token: "after-token-9876543210" }] }));
    await rename(join(dir, "c.yaml.new"), file);
    expect(await reloaded).toBe("reloaded 0 2");
    holder.close();
  });
});
