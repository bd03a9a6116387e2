/**
 * What the SDK-backed commands (worker, jobs, schedules) share: the --url/--token/--account flags
 * with their env vars, integer and JSON flag parsing, and one way to print an answer and a failure.
 */
import { type JsonValue, Sluice, SluiceApiError, SluiceNetworkError } from "@sluice/client";
import type { Command } from "commander";

export const defaultServerUrl = "http://127.0.0.1:9324";

export interface ConnectionFlags {
  url?: string;
  token?: string;
  account?: string;
}

/** `perAccount` false: a command over the whole server (backup), with no account to act for. */
export function addConnectionOptions(command: Command, perAccount = true): Command {
  command.option("--url <url>", `server URL (env SLUICE_URL, default ${defaultServerUrl})`).option("--token <token>", "bearer token (env SLUICE_TOKEN)");
  if (!perAccount) return command;
  return command.option("--account <id>", "act for this account (12 digits; a token of the server's own account may name any) (env SLUICE_ACCOUNT)");
}

export class UsageError extends Error {}

/**
 * A usage error (exit 2) naming where a bad URL came from, not the SDK's TypeError with a stack
 * trace; checked before anything is sent or imported. An empty SLUICE_URL counts as unset, as
 * the server's SLUICE_* variables do.
 */
function serverUrl(flags: ConnectionFlags, env: NodeJS.ProcessEnv): string {
  const fromEnv = env.SLUICE_URL === "" ? undefined : env.SLUICE_URL;
  const [url, source] = flags.url !== undefined ? [flags.url, "--url"] : fromEnv !== undefined ? [fromEnv, "SLUICE_URL"] : [defaultServerUrl, "the default URL"];
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    // Not a URL at all: reported below with the same message.
  }
  if (protocol !== "http:" && protocol !== "https:") throw new UsageError(`${source} must be an http:// or https:// URL such as ${defaultServerUrl}, got ${JSON.stringify(url)}`);
  return url;
}

/** The account to act for, from --account or SLUICE_ACCOUNT (empty counts as unset), checked before anything is sent. */
function accountOf(flags: ConnectionFlags, env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = env.SLUICE_ACCOUNT === "" ? undefined : env.SLUICE_ACCOUNT;
  const [account, source] = flags.account !== undefined ? [flags.account, "--account"] : [fromEnv, "SLUICE_ACCOUNT"];
  if (account !== undefined && !/^\d{12}$/.test(account)) throw new UsageError(`${source} must be a 12-digit account id, got ${JSON.stringify(account)}`);
  return account;
}

export interface Connection {
  url: string;
  token?: string;
  /** Sent as Sluice-Account. */
  account?: string;
}

/**
 * Where the server is, how to sign in and which account to act for: the flags, else
 * SLUICE_URL/SLUICE_TOKEN/SLUICE_ACCOUNT. `perAccount` false (backup): no account, whatever is set.
 */
export function connectionFromFlags(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env, perAccount = true): Connection {
  const url = serverUrl(flags, env);
  const token = flags.token ?? env.SLUICE_TOKEN;
  const account = perAccount ? accountOf(flags, env) : undefined;
  return { url, ...(token ? { token } : {}), ...(account !== undefined ? { account } : {}) };
}

export function sluiceFromFlags(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Sluice {
  return new Sluice(connectionFromFlags(flags, env));
}

/**
 * Decimal digits only, as `sluice serve` reads its numbers: Number() would take "" (an unset
 * shell variable) as 0, and " 5", "0x5" or "5e0" as 5.
 */
export function parseIntFlag(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^-?\d{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer in ${min}–${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** Prints a command's failure on stderr and exits: 2 for bad usage, 1 for everything else. */
export function exitWithError(err: unknown): never {
  if (err instanceof UsageError) {
    console.error(`sluice: ${err.message}`);
    process.exit(2);
  }
  if (err instanceof SluiceApiError) console.error(`sluice: ${err.code} (HTTP ${err.status}): ${err.message}`);
  else if (err instanceof SluiceNetworkError) console.error(`sluice: cannot reach the server: ${err.message}`);
  else console.error("sluice:", err);
  process.exit(1);
}

/** A flag's JSON text, or a UsageError naming the flag. */
export function parseJson(text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/** An answer, as indented JSON (for jq). */
export function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
