/**
 * The credentials file (`--credentials-file`): TOML, JSON or YAML by its extension, listing SigV4
 * access keys, bearer tokens and per-account settings (docs/security.md has the format). Read and
 * checked whole: a typo'd field, a duplicate key or a bad scope is an error naming where it is,
 * and no secret ever appears in a message.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { type AccountQuotas, quotaNames } from "../core/index.js";
import { tokenDigest } from "../protocols/auth/bearer.js";
import { type AccessKey, type AccountSettings, type ApiToken, type Credentials, type Scope, Secret, allScopes, isScope } from "../protocols/auth/principal.js";
import { webhookSecretProblem } from "../protocols/jobs/webhooks/signer.js";

export class CredentialsError extends Error {
  override readonly name = "CredentialsError";
}

/** The credentials that don't come from the file: env's single key and single token. */
export interface CredentialsEnv {
  accessKeyId?: string;
  secretAccessKey?: Secret;
  apiToken?: Secret;
}

const accessKeyIdPattern = /^[A-Za-z0-9_+=,.@-]{3,128}$/;
const accountIdPattern = /^\d{12}$/;
/** Long enough not to be guessed; `openssl rand -hex 20` makes one. */
export const secretMinLength = 16;

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseText(text: string, path: string): unknown {
  const ext = extname(path).toLowerCase();
  try {
    if (ext === ".toml") return parseToml(text);
    if (ext === ".json") return JSON.parse(text);
    if (ext === ".yaml" || ext === ".yml") return parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    // The parsers' messages quote the offending line, which may hold a secret: position only.
    const where = err instanceof Error ? /line (\d+)/i.exec(err.message)?.[0] : undefined;
    throw new CredentialsError(`${path} is not valid ${ext.slice(1).toUpperCase()}${where ? ` (${where})` : ""}.`);
  }
  throw new CredentialsError(`${path}: the credentials file must end in .toml, .json, .yaml or .yml.`);
}

class Reader {
  constructor(
    private readonly table: Table,
    private readonly where: string,
  ) {}

  checkFields(allowed: string[]): void {
    for (const field of Object.keys(this.table)) {
      if (!allowed.includes(field)) throw new CredentialsError(`${this.where}: unknown field "${field.slice(0, 60)}" (expected ${allowed.join(", ")}).`);
    }
  }

  string(field: string, pattern?: RegExp, describe?: string): string | undefined {
    const v = this.table[field];
    if (v === undefined) return undefined;
    if (typeof v !== "string") throw new CredentialsError(`${this.where}: ${field} must be a string.`);
    if (pattern && !pattern.test(v)) throw new CredentialsError(`${this.where}: ${field} must be ${describe}.`);
    return v;
  }

  required(field: string, pattern?: RegExp, describe?: string): string {
    const v = this.string(field, pattern, describe);
    if (v === undefined) throw new CredentialsError(`${this.where}: ${field} is missing.`);
    return v;
  }

  secret(field: string): Secret {
    const v = this.required(field);
    if (v.length < secretMinLength || /\s/.test(v)) {
      throw new CredentialsError(`${this.where}: ${field} must be at least ${secretMinLength} characters without spaces (e.g. from: openssl rand -hex 20).`);
    }
    return new Secret(v);
  }

  /** The account's quotas: whole numbers of at least 1 (leave one out for no limit). */
  quotas(): AccountQuotas | undefined {
    const out: AccountQuotas = {};
    for (const name of quotaNames) {
      const v = this.table[name];
      if (v === undefined) continue;
      if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) throw new CredentialsError(`${this.where}: ${name} must be a whole number of at least 1.`);
      out[name] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }

  scopes(): ReadonlySet<Scope> {
    const v = this.table.scopes;
    if (v === undefined) return new Set(allScopes);
    if (!Array.isArray(v) || v.length === 0 || !v.every(isScope)) {
      throw new CredentialsError(`${this.where}: scopes must be a non-empty list of ${allScopes.map((s) => `"${s}"`).join(", ")}.`);
    }
    return new Set(v);
  }
}

function list(doc: Table, field: string, path: string): Reader[] {
  const v = doc[field];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new CredentialsError(`${path}: ${field} must be a list (TOML: [[${field}]] tables).`);
  return v.map((item, i) => {
    const where = `${path}: ${field}[${i}]`;
    if (!isTable(item)) throw new CredentialsError(`${where} must be a table of fields.`);
    return new Reader(item, where);
  });
}

/** Builds the credentials from a parsed document and the env's single key/token. */
export function credentialsFrom(doc: unknown, path: string, env: CredentialsEnv, defaultAccountId: string): Credentials {
  if (!isTable(doc)) throw new CredentialsError(`${path}: the credentials file must be a table with keys, tokens and accounts.`);
  new Reader(doc, path).checkFields(["keys", "tokens", "accounts"]);
  const accessKeys = new Map<string, AccessKey>();
  const tokensByDigest = new Map<string, ApiToken>();
  const accounts = new Map<string, AccountSettings>();
  const addKey = (key: AccessKey, where: string): void => {
    if (accessKeys.has(key.accessKeyId)) throw new CredentialsError(`${where}: the access key id ${key.accessKeyId} is listed twice.`);
    accessKeys.set(key.accessKeyId, key);
  };
  const addToken = (token: ApiToken, where: string): void => {
    const digest = tokenDigest(token.token.reveal());
    if (tokensByDigest.has(digest)) throw new CredentialsError(`${where}: the same token is listed twice.`);
    tokensByDigest.set(digest, token);
  };

  for (const r of list(doc, "keys", path)) {
    r.checkFields(["accessKeyId", "secretAccessKey", "sessionToken", "accountId", "scopes"]);
    const accessKeyId = r.required("accessKeyId", accessKeyIdPattern, "3–128 characters of letters, digits and _+=,.@-");
    const sessionToken = r.string("sessionToken");
    addKey(
      {
        accessKeyId,
        secretAccessKey: r.secret("secretAccessKey"),
        ...(sessionToken === undefined ? {} : { sessionToken: new Secret(sessionToken) }),
        accountId: r.string("accountId", accountIdPattern, "12 digits") ?? defaultAccountId,
        scopes: r.scopes(),
      },
      `${path}: keys`,
    );
  }
  list(doc, "tokens", path).forEach((r, i) => {
    r.checkFields(["name", "token", "accountId", "scopes"]);
    const name = r.string("name", /^[\x21-\x7e]{1,64}$/, "1–64 printable characters") ?? `tokens[${i}]`;
    addToken({ name, token: r.secret("token"), accountId: r.string("accountId", accountIdPattern, "12 digits") ?? defaultAccountId, scopes: r.scopes() }, `${path}: tokens[${i}]`);
  });
  for (const r of list(doc, "accounts", path)) {
    r.checkFields(["id", "webhookSecret", ...quotaNames]);
    const id = r.required("id", accountIdPattern, "12 digits");
    const webhookSecret = r.string("webhookSecret");
    const problem = webhookSecret === undefined ? undefined : webhookSecretProblem(webhookSecret);
    if (problem !== undefined) throw new CredentialsError(`${path}: accounts ${id}: webhookSecret is not a usable Standard Webhooks secret: ${problem}.`);
    if (accounts.has(id)) throw new CredentialsError(`${path}: accounts ${id} is listed twice.`);
    const quotas = r.quotas();
    accounts.set(id, { accountId: id, ...(webhookSecret === undefined ? {} : { webhookSecret: new Secret(webhookSecret) }), ...(quotas === undefined ? {} : { quotas }) });
  }

  if (env.accessKeyId !== undefined && env.secretAccessKey !== undefined) {
    addKey({ accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey, accountId: defaultAccountId, scopes: new Set(allScopes) }, "SLUICE_ACCESS_KEY_ID");
  }
  if (env.apiToken !== undefined) addToken({ name: "SLUICE_API_TOKEN", token: env.apiToken, accountId: defaultAccountId, scopes: new Set(allScopes) }, "SLUICE_API_TOKEN");
  if (accessKeys.size === 0 && tokensByDigest.size === 0) throw new CredentialsError(`${path}: lists no access key and no token, so no request could be served.`);
  return { accessKeys, tokensByDigest, accounts };
}

/** Reads and checks the file (when given) together with the env's key and token. */
export async function loadCredentials(path: string | undefined, env: CredentialsEnv, defaultAccountId: string): Promise<Credentials> {
  if (path === undefined) return credentialsFrom({}, "environment", env, defaultAccountId);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CredentialsError(`cannot read the credentials file ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "error")}.`);
  }
  return credentialsFrom(parseText(text, path), path, env, defaultAccountId);
}
