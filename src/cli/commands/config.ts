/**
 * `sluice config check FILE` and `sluice config export`: the declarative config file (`serve
 * --config`) checked offline with the server's own rules, and the running server's queues and
 * schedules written as such a file (GET /v1/config, admin scope).
 */
import type { Command } from "commander";
import { type ConfigFormat, configFormats } from "../../server/declared/config-formats.js";
import { envVarNames } from "../../server/env-var-names.js";
import { adminJson } from "./admin-http.js";
import { action } from "./queues.js";
import { type ConnectionFlags, UsageError, addConnectionOptions, connectionFromFlags } from "./sdk-connection.js";

const defaultAccountId = "000000000000";

async function check(file: string, flags: { accountId?: string }): Promise<void> {
  const accountId = flags.accountId ?? process.env[envVarNames.accountId] ?? defaultAccountId;
  // Loaded here, not at the top: every other CLI command starts without the server's modules.
  const { DeclaredConfigError, loadDeclaredConfig } = await import("../../server/declared/declared-config.js");
  try {
    const { config } = await loadDeclaredConfig(file, accountId);
    const queues = config.sections.reduce((n, s) => n + s.queues.length, 0);
    const schedules = config.sections.reduce((n, s) => n + s.schedules.length, 0);
    console.log(`${file}: valid (${queues} queue(s), ${schedules} schedule(s), ${config.sections.length} account(s))`);
  } catch (err) {
    if (!(err instanceof DeclaredConfigError)) throw err;
    console.error(`sluice: ${err.message}`);
    process.exit(2);
  }
}

function formatOf(flag: string | undefined): ConfigFormat {
  const format = configFormats.find((f) => f === (flag ?? "yaml"));
  if (!format) throw new UsageError(`--format must be one of ${configFormats.join(", ")}, got ${JSON.stringify(flag)}`);
  return format;
}

export function registerConfigCommand(program: Command): void {
  const config = program.command("config").description("Check a declarative config file (serve --config), or export the running queues and schedules as one.");

  config
    .command("check <file>")
    .description("Check a config file as the server would, changing nothing: exit 0 when valid, 2 with the file, line and field of the first problem.")
    .option("--account-id <id>", `the server's own account, whose queues go at the top level (env ${envVarNames.accountId}, default ${defaultAccountId})`)
    .action(action(check));

  addConnectionOptions(
    config
      .command("export")
      .description("Print the server's queues and schedules, every account's, as a config file (admin scope; fields at their defaults left out).")
      .option("--format <format>", `${configFormats.join(", ")} (default yaml)`),
    false,
  ).action(
    action(async (flags: ConnectionFlags & { format?: string }) => {
      const format = formatOf(flags.format);
      const doc = await adminJson<Record<string, unknown>>(connectionFromFlags(flags, process.env, false), "GET", "/v1/config");
      const { renderConfig } = await import("../../server/declared/config-render.js");
      let text: string;
      try {
        text = renderConfig(doc, format);
      } catch (err) {
        console.error(`sluice: ${(err as Error).message}`);
        process.exit(1);
      }
      process.stdout.write(text);
    }),
  );
}
