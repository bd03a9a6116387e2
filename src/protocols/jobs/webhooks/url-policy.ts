/**
 * SSRF protection for webhook targets: http(s) only, and no loopback, private, link-local, CGNAT,
 * multicast, documentation or otherwise non-public addresses unless the server allows them
 * (`--webhook-allow-private`). Checked at submit (a clear 400; a host's lookup is reused for
 * 30 s, webhook-hosts.ts) and again at connect time on every delivery, through the socket's own
 * DNS lookup — so a name that resolved to a public address at submit and to 10.0.0.1 later (DNS
 * rebinding) is still refused.
 */
import { type LookupAddress, type LookupAllOptions, type LookupOneOptions, lookup as dnsLookup } from "node:dns";
import { BlockList, isIP } from "node:net";
import { fail } from "../../../core/index.js";
import { WebhookHosts } from "./webhook-hosts.js";

const nonPublic = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv6");
}

const mappedV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

export function isPublicAddress(address: string): boolean {
  const mapped = mappedV4.exec(address);
  if (mapped) return isPublicAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 0) return false;
  return !nonPublic.check(address, family === 4 ? "ipv4" : "ipv6");
}

export interface WebhookUrlPolicy {
  allowPrivate: boolean;
  /** Submit-time lookups of webhook hosts (default: one cache for the process, 30 s). */
  hosts?: WebhookHosts;
}

const processHosts = new WebhookHosts();

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

/** At submit: the URL's host must resolve only to public addresses (unless private targets are allowed). */
export async function checkWebhookTarget(rawUrl: string, policy: WebhookUrlPolicy): Promise<void> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return fail("ValidationFailed", `webhook.url is not an absolute URL: ${rawUrl}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail("ValidationFailed", "webhook.url must be an http or https URL.");
  if (policy.allowPrivate) return;
  const host = hostOf(url);
  const addresses = isIP(host) ? [host] : await resolveAll(host, policy.hosts ?? processHosts);
  const refused = addresses.find((a) => !isPublicAddress(a));
  if (refused !== undefined) {
    fail("ValidationFailed", `webhook.url ${host} resolves to ${refused}, a non-public address; the server refuses private webhook targets unless started with --webhook-allow-private.`);
  }
}

async function resolveAll(host: string, hosts: WebhookHosts): Promise<string[]> {
  try {
    return await hosts.resolve(host);
  } catch (err) {
    return fail("ValidationFailed", `webhook.url host ${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? "error"}).`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses non-public addresses at connect time. */
export function guardedLookup(policy: WebhookUrlPolicy) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = policy.allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused) {
        const error: NodeJS.ErrnoException = new Error(`refused: ${hostname} resolves to non-public address ${refused.address}`);
        error.code = "EWEBHOOKPRIVATE";
        return callback(error, []);
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

/** IP-literal hosts never reach a lookup: checked here before connecting. */
export function literalHostRefused(url: URL, policy: WebhookUrlPolicy): boolean {
  const host = hostOf(url);
  return !policy.allowPrivate && isIP(host) !== 0 && !isPublicAddress(host);
}
