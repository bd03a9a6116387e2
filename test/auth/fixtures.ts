/** Credentials files for the auth tests: two accounts, keys and tokens with different scopes. */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

export const accountA = "111111111111";
export const accountB = "222222222222";

export const keys = {
  admin: { accessKeyId: "AKIDADMINA", secretAccessKey: "admin-secret-0123456789abcdef", accountId: accountA },
  sender: { accessKeyId: "AKIDSENDERA", secretAccessKey: "sender-secret-0123456789abcdef", accountId: accountA, scopes: ["submit"] },
  other: { accessKeyId: "AKIDADMINB", secretAccessKey: "other-secret-0123456789abcdef", accountId: accountB },
  session: { accessKeyId: "ASIATEMPA", secretAccessKey: "session-secret-0123456789abcdef", sessionToken: "session-token-for-temp-key", accountId: accountA },
} as const;

export const tokens = {
  admin: { name: "admin", token: "tok-admin-0123456789abcdef", accountId: accountA },
  submitter: { name: "api-server", token: "tok-submit-0123456789abcdef", accountId: accountA, scopes: ["submit"] },
  worker: { name: "gpu-worker", token: "tok-work-0123456789abcdef", accountId: accountA, scopes: ["work"] },
  reader: { name: "dashboard", token: "tok-read-0123456789abcdef", accountId: accountA, scopes: ["read"] },
} as const;

export function credentialsToml(): string {
  const lines: string[] = [];
  for (const key of Object.values(keys)) {
    lines.push("[[keys]]");
    for (const [field, value] of Object.entries(key)) lines.push(`${field} = ${JSON.stringify(value)}`);
    lines.push("");
  }
  for (const token of Object.values(tokens)) {
    lines.push("[[tokens]]");
    for (const [field, value] of Object.entries(token)) lines.push(`${field} = ${JSON.stringify(value)}`);
    lines.push("");
  }
  return lines.join("\n");
}

export async function writeCredentials(dir: string, name = "credentials.toml", text = credentialsToml()): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}
