/**
 * Who a request acts as, and what it may do. Both protocols authenticate into a Principal (SQS by
 * a SigV4 signature, the jobs API and the server's other routes by a bearer token); the
 * credentials behind them are loaded by the server (src/server/credentials-file.ts).
 */
import { inspect } from "node:util";
import type { AccountQuotas } from "../../core/index.js";

/** What a key or token may do: submit jobs/messages, work them, read state, administer queues. */
export type Scope = "submit" | "work" | "read" | "admin";
export const allScopes: readonly Scope[] = ["submit", "work", "read", "admin"];

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (allScopes as readonly string[]).includes(value);
}

/**
 * A secret that never shows itself by accident: console.log, util.inspect, JSON.stringify and
 * template strings all print `[redacted]`. Only `reveal()` hands the value out.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return "[redacted]";
  }
  toJSON(): string {
    return "[redacted]";
  }
  [inspect.custom](): string {
    return "[redacted]";
  }
}

export interface Principal {
  accountId: string;
  scopes: ReadonlySet<Scope>;
  /** The access key id or the token's name: safe to log, never the secret itself. */
  name: string;
}

export interface AccessKey {
  accessKeyId: string;
  secretAccessKey: Secret;
  /** When set, requests signed with this key must carry it (X-Amz-Security-Token). */
  sessionToken?: Secret;
  accountId: string;
  scopes: ReadonlySet<Scope>;
}

export interface ApiToken {
  /** A label for logs and errors ("ci-submitter"); the token itself is never shown. */
  name: string;
  token: Secret;
  accountId: string;
  scopes: ReadonlySet<Scope>;
}

export interface AccountSettings {
  accountId: string;
  /** `whsec_…`: signs this account's job webhooks (the server's secret when absent). */
  webhookSecret?: Secret;
  /** Its quotas (docs/security.md, "Quotas"); none when absent. */
  quotas?: AccountQuotas;
}

/** Everything that authenticates requests, as last loaded. */
export interface Credentials {
  accessKeys: ReadonlyMap<string, AccessKey>;
  /** Keyed by the SHA-256 (hex) of the token, so a lookup compares digests, not secrets. */
  tokensByDigest: ReadonlyMap<string, ApiToken>;
  accounts: ReadonlyMap<string, AccountSettings>;
}

/**
 * Where the protocols read credentials from: undefined means none are configured, and the
 * server is in open mode (anonymous requests, loopback or --allow-anonymous only).
 */
export interface CredentialsSource {
  current(): Credentials | undefined;
}

export function principalOf(holder: AccessKey | ApiToken): Principal {
  return { accountId: holder.accountId, scopes: holder.scopes, name: "accessKeyId" in holder ? holder.accessKeyId : holder.name };
}
