/**
 * Each account's quotas as core and the protocols read them: the credentials file's `[[accounts]]`
 * (as last reloaded) and, for the server's own account, the `--max-*` / `--requests-per-second`
 * flags under them. Rebuilt only when the credentials change, so a lookup is one map read.
 */
import type { AccountQuotas, QuotaName, QuotaSource } from "../core/index.js";
import type { Credentials, CredentialsSource } from "../protocols/auth/principal.js";

export interface AccountQuotaTableOptions {
  credentials: CredentialsSource;
  /** The server's own account id (--account-id): core names it "". */
  defaultAccountId: string;
  /** The flags' quotas for the server's own account. */
  defaults: AccountQuotas;
  onRefused?: (accountId: string, quota: QuotaName) => void;
}

export class AccountQuotaTable implements QuotaSource {
  /** By 12-digit account id. */
  private byId = new Map<string, AccountQuotas>();
  private builtFrom: Credentials | undefined | null = null;

  constructor(private readonly o: AccountQuotaTableOptions) {}

  /** By core's account name ("" is the server's own). */
  of(account: string): AccountQuotas | undefined {
    return this.ofAccountId(account === "" ? this.o.defaultAccountId : account);
  }

  ofAccountId(accountId: string): AccountQuotas | undefined {
    const credentials = this.o.credentials.current();
    if (credentials !== this.builtFrom) this.rebuild(credentials);
    return this.byId.get(accountId);
  }

  refused(account: string, quota: QuotaName): void {
    this.o.onRefused?.(account === "" ? this.o.defaultAccountId : account, quota);
  }

  /** Every account with a quota, for /metrics. */
  entries(): Iterable<[string, AccountQuotas]> {
    this.ofAccountId(this.o.defaultAccountId);
    return this.byId.entries();
  }

  private rebuild(credentials: Credentials | undefined): void {
    const byId = new Map<string, AccountQuotas>();
    for (const [id, settings] of credentials?.accounts ?? []) if (settings.quotas !== undefined) byId.set(id, settings.quotas);
    // The file's entry for the server's own account wins over the flags, quota by quota.
    const own = { ...this.o.defaults, ...byId.get(this.o.defaultAccountId) };
    if (Object.keys(own).length > 0) byId.set(this.o.defaultAccountId, own);
    this.byId = byId;
    this.builtFrom = credentials;
  }
}
