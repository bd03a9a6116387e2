/**
 * Submit-time webhook host lookups: shared while fresh, done again once expired, a failure never
 * kept, the number of hosts bounded — and the SSRF check applied to the cached answer as to a fresh one.
 */
import { describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/index.js";
import { WebhookHosts } from "../../src/protocols/jobs/webhooks/webhook-hosts.js";
import { checkWebhookTarget } from "../../src/protocols/jobs/webhooks/url-policy.js";

function counting(answers: Record<string, string[] | Error>): { lookup: (host: string) => Promise<string[]>; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    lookup: async (host) => {
      calls.push(host);
      const a = answers[host];
      if (a === undefined || a instanceof Error) throw a ?? new Error(`no answer for ${host}`);
      return a;
    },
  };
}

describe("WebhookHosts", () => {
  it("shares one lookup per host until it expires, then looks up again", async () => {
    let now = 0;
    const dns = counting({ "hooks.example.com": ["93.184.216.34"] });
    const hosts = new WebhookHosts({ ttlMs: 1_000, nowMs: () => now, lookup: dns.lookup });
    const answers = await Promise.all([hosts.resolve("hooks.example.com"), hosts.resolve("hooks.example.com")]);
    now = 999;
    answers.push(await hosts.resolve("hooks.example.com"));
    expect(answers).toEqual([["93.184.216.34"], ["93.184.216.34"], ["93.184.216.34"]]);
    expect(dns.calls).toEqual(["hooks.example.com"]);
    now = 1_000;
    await hosts.resolve("hooks.example.com");
    expect(dns.calls).toEqual(["hooks.example.com", "hooks.example.com"]);
  });

  it("does not keep a failed lookup", async () => {
    const dns = counting({ "down.example.com": new Error("ENOTFOUND") });
    const hosts = new WebhookHosts({ nowMs: () => 0, lookup: dns.lookup });
    await expect(hosts.resolve("down.example.com")).rejects.toThrow("ENOTFOUND");
    await expect(hosts.resolve("down.example.com")).rejects.toThrow("ENOTFOUND");
    expect(dns.calls).toEqual(["down.example.com", "down.example.com"]);
  });

  it("keeps at most maxHosts, dropping the oldest", async () => {
    const dns = counting({ a: ["93.184.216.1"], b: ["93.184.216.2"], c: ["93.184.216.3"] });
    const hosts = new WebhookHosts({ maxHosts: 2, nowMs: () => 0, lookup: dns.lookup });
    for (const host of ["a", "b", "c", "c", "b", "a"]) await hosts.resolve(host);
    expect(dns.calls).toEqual(["a", "b", "c", "a"]);
  });

  it("refuses a host whose cached addresses are not public, as a fresh lookup would be", async () => {
    const dns = counting({ "internal.example.com": ["10.0.0.7"], "hooks.example.com": ["93.184.216.34"] });
    const policy = { allowPrivate: false, hosts: new WebhookHosts({ nowMs: () => 0, lookup: dns.lookup }) };
    for (let i = 0; i < 2; i++) {
      const err = await checkWebhookTarget("https://internal.example.com/hook", policy).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SluiceError);
      expect((err as SluiceError).message).toContain("resolves to 10.0.0.7, a non-public address");
      await checkWebhookTarget("https://hooks.example.com/hook", policy);
    }
    expect(dns.calls).toEqual(["internal.example.com", "hooks.example.com"]);
  });
});
