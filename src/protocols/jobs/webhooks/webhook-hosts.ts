/**
 * The addresses a webhook host resolved to at submit, kept for a short while: a batch of submits
 * naming one endpoint does one DNS lookup instead of one each (a lookup takes a thread of libuv's
 * pool, which the store's fsyncs share). Only the submit-time answer is cached — every delivery
 * still resolves afresh at connect time and refuses non-public addresses (url-policy.ts).
 */
import { lookup as dnsLookup } from "node:dns";

export type LookupAll = (host: string) => Promise<string[]>;

export interface WebhookHostsOptions {
  /** How long a resolved host's addresses are reused. Default 30 s. */
  ttlMs?: number;
  /** Hosts kept at most; the oldest entry goes first. Default 1,000. */
  maxHosts?: number;
  nowMs?: () => number;
  lookup?: LookupAll;
}

const systemLookup: LookupAll = (host) =>
  new Promise<string[]>((resolve, reject) => dnsLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))));

export class WebhookHosts {
  private readonly ttlMs: number;
  private readonly maxHosts: number;
  private readonly nowMs: () => number;
  private readonly lookup: LookupAll;
  /** By host: its lookup (in flight or done) and when it stops being reused. */
  private readonly entries = new Map<string, { addresses: Promise<string[]>; expiresAtMs: number }>();

  constructor(o: WebhookHostsOptions = {}) {
    this.ttlMs = o.ttlMs ?? 30_000;
    this.maxHosts = o.maxHosts ?? 1_000;
    this.nowMs = o.nowMs ?? (() => performance.now());
    this.lookup = o.lookup ?? systemLookup;
  }

  /** The host's addresses: a lookup shared by every caller until it expires; a failed one is not kept. */
  resolve(host: string): Promise<string[]> {
    const now = this.nowMs();
    const known = this.entries.get(host);
    if (known && known.expiresAtMs > now) return known.addresses;
    if (known) this.entries.delete(host);
    const addresses = this.lookup(host);
    const entry = { addresses, expiresAtMs: now + this.ttlMs };
    this.entries.set(host, entry);
    if (this.entries.size > this.maxHosts) this.entries.delete(this.entries.keys().next().value!);
    addresses.catch(() => {
      if (this.entries.get(host) === entry) this.entries.delete(host);
    });
    return addresses;
  }
}
