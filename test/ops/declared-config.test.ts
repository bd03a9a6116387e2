/**
 * The declarative config (`serve --config`) against an in-process server on SQLite: what a file
 * declares is created (dead-letter queues first), changed values are updated, re-applying changes
 * nothing, nothing is deleted without `prune` (and then only in that account), and an invalid
 * file — at start or on reload — names its file, line and field and changes nothing. Export of
 * the running state round-trips byte for byte in YAML, TOML and JSON.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { type ConfigFormat, renderConfig } from "../../src/server/declared/config-render.js";
import { DeclaredConfigError, loadDeclaredConfig } from "../../src/server/declared/declared-config.js";
import { repoRoot } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const otherAccount = "222222222222";

interface LogLine {
  msg: string;
  level: number;
  created?: number;
  updated?: number;
  deleted?: number;
  unchanged?: number;
  reason?: string;
}

const running = new Set<RunningServer>();

async function start(p: { dataDir?: string; configFile?: string } = {}): Promise<{ server: RunningServer; logs: LogLine[]; dataDir: string }> {
  const dataDir = p.dataDir ?? (await makeTempDir("sluice-declared-"));
  const logs: LogLine[] = [];
  const logger = createLogger({ level: "info", destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) } });
  const server = await startServer({ port: 0, dataDir, logger, ...(p.configFile ? { configFile: p.configFile } : {}) });
  running.add(server);
  return { server, logs, dataDir };
}

async function stop(server: RunningServer): Promise<void> {
  running.delete(server);
  await server.close();
}

afterEach(async () => {
  await Promise.all([...running].map(stop));
});
afterAll(removeTempDirs);

async function writeConfig(dir: string, name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

async function api<T = Record<string, unknown>>(server: RunningServer, method: string, path: string, body?: unknown, account?: string): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (account !== undefined) headers["sluice-account"] = account;
  const res = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

interface QueueAnswer {
  queue: {
    name: string;
    attributes: Record<string, unknown> & { redrivePolicy: { deadLetterQueue: string; maxReceiveCount: number } | null };
    settings: Record<string, unknown>;
  };
}

async function queueNames(server: RunningServer, account?: string): Promise<string[]> {
  const { body } = await api<{ queues: Array<{ name: string }> }>(server, "GET", "/v1/queues?limit=100", undefined, account);
  return body.queues.map((q) => q.name);
}

const applied = (logs: LogLine[]): LogLine[] => logs.filter((l) => l.msg === "declarative config applied");

const baseConfig = `# a source that sorts before its dead-letter queue: created after it all the same
queues:
  alpha:
    visibilityTimeoutSeconds: 60
    redrivePolicy: { deadLetterQueue: zeta-dlq, maxReceiveCount: 4 }
    tags: { team: ml, tier: gold }
    jobs:
      maxAttempts: 5
      backoff: { baseSeconds: 2, capSeconds: 60 }
      maxRunning: 10
  zeta-dlq:
    messageRetentionPeriodSeconds: 1209600
  orders:
    fifo: true
  orders.fifo:
    fifo: true
    contentBasedDeduplication: true
    defaultPriority: 3
  extra: {}
schedules:
  nightly:
    queue: alpha
    cron: "30 2 * * *"
    timezone: Europe/Berlin
    input: { report: daily }
    paused: true
accounts:
  "${otherAccount}":
    queues:
      theirs: { delaySeconds: 5 }
`;

describe("declarative config", { timeout: 60_000 }, () => {
  it("refuses fifo: true on a name without .fifo, naming the line", async () => {
    const dir = await makeTempDir();
    const file = await writeConfig(dir, "c.yaml", baseConfig);
    await expect(loadDeclaredConfig(file, "000000000000")).rejects.toThrow(`${file}:13: queues.orders: A FIFO queue's name ends in ".fifo", got "orders".`);
  });

  const validConfig = baseConfig.replace("  orders:\n    fifo: true\n", "");

  it("creates what the file declares before the server listens, dead-letter queues first, in each account", async () => {
    const dir = await makeTempDir();
    const { server, logs } = await start({ configFile: await writeConfig(dir, "c.yaml", validConfig) });
    // The apply is logged before the line that says the server is ready.
    const messages = logs.map((l) => l.msg);
    expect(messages.indexOf("declarative config applied")).toBeLessThan(messages.findIndex((m) => m.startsWith("Sluice listening on")));
    expect(applied(logs)[0]).toMatchObject({ created: 6, updated: 0, deleted: 0, unchanged: 0 });

    expect(await queueNames(server)).toEqual(["alpha", "extra", "orders.fifo", "zeta-dlq"]);
    const alpha = (await api<QueueAnswer>(server, "GET", "/v1/queues/alpha")).body.queue;
    expect(alpha.attributes.visibilityTimeoutSeconds).toBe(60);
    expect(alpha.attributes.redrivePolicy).toEqual({ deadLetterQueue: "zeta-dlq", maxReceiveCount: 4 });
    expect(alpha.settings).toMatchObject({ maxAttempts: 5, backoff: { baseSeconds: 2, capSeconds: 60 }, maxRunning: 10, leaseSeconds: 30 });
    expect((await server.queues.getQueue("", "alpha")).tags).toEqual({ team: "ml", tier: "gold" });
    const fifo = (await api<QueueAnswer>(server, "GET", "/v1/queues/orders.fifo")).body.queue;
    expect(fifo.attributes).toMatchObject({ fifo: true, contentBasedDeduplication: true, defaultPriority: 3 });
    const nightly = (await api<{ schedule: Record<string, unknown> }>(server, "GET", "/v1/schedules/nightly")).body.schedule;
    expect(nightly).toMatchObject({ queue: "alpha", cron: "30 2 * * *", timezone: "Europe/Berlin", input: { report: "daily" }, paused: true });
    expect(await queueNames(server, otherAccount)).toEqual(["theirs"]);
    expect((await api<QueueAnswer>(server, "GET", "/v1/queues/theirs", undefined, otherAccount)).body.queue.attributes.delaySeconds).toBe(5);
  });

  it("re-applies the same file without writing anything", async () => {
    const dir = await makeTempDir();
    const { server, logs } = await start({ configFile: await writeConfig(dir, "c.yaml", validConfig) });
    const before = await server.queues.getQueue("", "alpha");
    const scheduleBefore = (await api<{ schedule: { updatedAt: string } }>(server, "GET", "/v1/schedules/nightly")).body.schedule;
    await server.declaredConfig.reload();
    expect(applied(logs)[1]).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 6 });
    expect((await server.queues.getQueue("", "alpha")).updatedAtMs).toBe(before.updatedAtMs);
    expect((await api<{ schedule: { updatedAt: string } }>(server, "GET", "/v1/schedules/nightly")).body.schedule.updatedAt).toBe(scheduleBefore.updatedAt);
  });

  it("updates what changed, deletes nothing without prune, and prunes only the account that says so", async () => {
    const dir = await makeTempDir();
    const file = await writeConfig(dir, "c.yaml", validConfig);
    const { server, logs } = await start({ configFile: file });
    expect((await api(server, "POST", "/v1/queues", { name: "made-by-hand" })).status).toBe(201);
    expect((await api(server, "POST", "/v1/queues", { name: "theirs-by-hand" }, otherAccount)).status).toBe(201);

    const changed = validConfig
      .replace("visibilityTimeoutSeconds: 60", "visibilityTimeoutSeconds: 90")
      .replace("tags: { team: ml, tier: gold }", "tags: { team: search }")
      .replace("maxRunning: 10", "maxRunning: null")
      .replace('cron: "30 2 * * *"', 'cron: "0 3 * * *"')
      .replace("paused: true", "paused: false")
      .replace("  extra: {}\n", "");
    await writeFile(file, changed);
    await server.declaredConfig.reload();
    expect(applied(logs)[1]).toMatchObject({ created: 0, updated: 2, deleted: 0 });
    const alpha = (await api<QueueAnswer>(server, "GET", "/v1/queues/alpha")).body.queue;
    expect(alpha.attributes.visibilityTimeoutSeconds).toBe(90);
    expect(alpha.settings.maxRunning).toBeNull();
    expect(alpha.settings.maxAttempts).toBe(5);
    expect((await server.queues.getQueue("", "alpha")).tags).toEqual({ team: "search" });
    const nightly = (await api<{ schedule: Record<string, unknown> }>(server, "GET", "/v1/schedules/nightly")).body.schedule;
    expect(nightly).toMatchObject({ cron: "0 3 * * *", paused: false });
    // Not declared any more, but no prune: kept.
    expect(await queueNames(server)).toEqual(["alpha", "extra", "made-by-hand", "orders.fifo", "zeta-dlq"]);

    await writeFile(file, `prune: true\n${changed}`);
    await server.declaredConfig.reload();
    expect(applied(logs)[2]).toMatchObject({ created: 0, updated: 0, deleted: 2 });
    expect(await queueNames(server)).toEqual(["alpha", "orders.fifo", "zeta-dlq"]);
    expect(await queueNames(server, otherAccount)).toEqual(["theirs", "theirs-by-hand"]);

    await writeFile(file, `prune: true\n${changed.replace(`  "${otherAccount}":\n`, `  "${otherAccount}":\n    prune: true\n`)}`);
    await server.declaredConfig.reload();
    expect(applied(logs)[3]).toMatchObject({ created: 0, updated: 0, deleted: 1 });
    expect(await queueNames(server, otherAccount)).toEqual(["theirs"]);
    // Pruning schedules too: one not in the file goes.
    expect((await api(server, "PUT", "/v1/schedules/by-hand", { queue: "alpha", everySeconds: 60, input: null })).status).toBe(201);
    await server.declaredConfig.reload();
    expect((await api(server, "GET", "/v1/schedules/by-hand")).status).toBe(404);
    expect((await api(server, "GET", "/v1/schedules/nightly")).status).toBe(200);
  });

  it("stops the start on an invalid file, naming file, line and field, having changed nothing", async () => {
    const dir = await makeTempDir();
    const dataDir = await makeTempDir();
    const outOfRange = await writeConfig(dir, "range.yaml", "queues:\n  good: {}\n  bad:\n    delaySeconds: 901\n");
    await expect(start({ dataDir, configFile: outOfRange })).rejects.toThrow(`${outOfRange}:4: queues.bad.delaySeconds: delaySeconds must be an integer from 0 to 900, got 901.`);
    const unknownField = await writeConfig(dir, "unknown.yaml", "queues:\n  good: {}\n  bad:\n    visibility: 5\n");
    await expect(start({ dataDir, configFile: unknownField })).rejects.toThrow(`${unknownField}:4: queues.bad.visibility: unknown field (expected fifo, visibilityTimeoutSeconds,`);
    // Found only against the server's state (the plan): still before any write.
    const missingDlq = await writeConfig(dir, "dlq.yaml", "queues:\n  good: {}\n  bad:\n    redrivePolicy:\n      deadLetterQueue: nowhere\n      maxReceiveCount: 3\n");
    await expect(start({ dataDir, configFile: missingDlq })).rejects.toThrow(
      `${missingDlq}:5: queues.bad.redrivePolicy.deadLetterQueue: the dead-letter queue nowhere is neither declared in this file nor kept on the server.`,
    );
    const cycle = await writeConfig(dir, "cycle.yaml", "queues:\n  a:\n    redrivePolicy: { deadLetterQueue: b, maxReceiveCount: 3 }\n  b:\n    redrivePolicy: { deadLetterQueue: a, maxReceiveCount: 3 }\n");
    await expect(start({ dataDir, configFile: cycle })).rejects.toThrow(/cycle\.yaml:\d+: queues\.[ab]\.redrivePolicy: the dead-letter queues form a cycle\./);
    const itself = await writeConfig(dir, "itself.yaml", "queues:\n  a:\n    redrivePolicy: { deadLetterQueue: a, maxReceiveCount: 3 }\n");
    await expect(start({ dataDir, configFile: itself })).rejects.toThrow(`${itself}:3: queues.a.redrivePolicy.deadLetterQueue: a queue can't be its own dead-letter queue.`);
    const { server } = await start({ dataDir });
    expect(await queueNames(server)).toEqual([]);
  });

  it("names the line in TOML and JSON files too", async () => {
    const dir = await makeTempDir();
    const toml = await writeConfig(dir, "c.toml", '[queues.good]\n\n[queues."odd.fifo"]\ndefaultPriority = 10\n');
    await expect(loadDeclaredConfig(toml, "000000000000")).rejects.toThrow(`${toml}:4: queues["odd.fifo"].defaultPriority: defaultPriority must be an integer from 0 to 9, got 10.`);
    const json = await writeConfig(dir, "c.json", '{\n  "schedules": {\n    "s": {\n      "queue": "q",\n      "everySeconds": 60,\n      "timezone": "Mars/Olympus"\n    }\n  }\n}\n');
    await expect(loadDeclaredConfig(json, "000000000000")).rejects.toThrow(`${json}:6: schedules.s.timezone: timezone "Mars/Olympus" is not a known IANA time zone`);
    const twice = await writeConfig(dir, "twice.json", '{\n  "queues": {\n    "a": {},\n    "a": {"delaySeconds": 1}\n  }\n}\n');
    await expect(loadDeclaredConfig(twice, "000000000000")).rejects.toThrow(`${twice}:4: not valid JSON: Map keys must be unique`);
    const broken = await writeConfig(dir, "broken.toml", "[queues.a]\nvisibilityTimeoutSeconds =\n");
    await expect(loadDeclaredConfig(broken, "000000000000")).rejects.toThrow(new RegExp(`^${broken}:2: not valid TOML`));
    const own = await writeConfig(dir, "own.yaml", 'accounts:\n  "000000000000":\n    queues: { q: {} }\n');
    await expect(loadDeclaredConfig(own, "000000000000")).rejects.toThrow(`${own}:2: accounts.000000000000: is the server's own account`);
    await expect(loadDeclaredConfig(join(dir, "c.ini"), "000000000000")).rejects.toBeInstanceOf(DeclaredConfigError);
  });

  it("on a reload, an invalid file changes nothing and is logged as one error", async () => {
    const dir = await makeTempDir();
    const file = await writeConfig(dir, "c.yaml", "queues:\n  keep: { delaySeconds: 1 }\n");
    const { server, logs } = await start({ configFile: file });
    await writeFile(file, "queues:\n  keep: { delaySeconds: 2 }\n  new-one: {}\n  bad: { maximumMessageSizeBytes: 5 }\n");
    await server.declaredConfig.reload();
    const failures = logs.filter((l) => l.msg === "declarative config not applied");
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).toBe(`${file}:4: queues.bad.maximumMessageSizeBytes: maximumMessageSizeBytes must be an integer from 1024 to 1048576, got 5.`);
    expect(await queueNames(server)).toEqual(["keep"]);
    expect((await api<QueueAnswer>(server, "GET", "/v1/queues/keep")).body.queue.attributes.delaySeconds).toBe(1);
  });

  for (const format of ["yaml", "toml", "json"] as const satisfies readonly ConfigFormat[]) {
    it(`exports the running state as ${format}: applied to an empty server and exported again, byte-identical`, async () => {
      const dir = await makeTempDir();
      const { server: first } = await start({ configFile: await writeConfig(dir, "c.yaml", validConfig) });
      // State made through the APIs, not the file: a job queue (with its -dlq) and a schedule in another account.
      expect((await api(first, "PUT", "/v1/queues/embed", { leaseSeconds: 120, timeoutSeconds: 600 })).status).toBe(200);
      expect((await api(first, "PUT", "/v1/schedules/hourly", { queue: "theirs", everySeconds: 3600, input: [1, "two"], catchUp: "all", options: { priority: 2 } }, otherAccount)).status).toBe(201);
      const exported = renderConfig((await api(first, "GET", "/v1/config")).body, format);
      expect(exported).toContain("embed-dlq");
      const second = await start({ configFile: await writeConfig(dir, `export.${format}`, exported) });
      expect(renderConfig((await api(second.server, "GET", "/v1/config")).body, format)).toBe(exported);
    });
  }

  it("reads the examples of docs/operations.md alike in YAML and TOML, and fails as the doc says", async () => {
    const doc = await readFile(join(repoRoot, "docs/operations.md"), "utf8");
    const blocks = [...doc.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)];
    const yamlText = blocks.find((b) => b[1] === "yaml" && b[2]!.startsWith("# sluice.yaml"))![2]!;
    const tomlText = blocks.find((b) => b[1] === "toml" && b[2]!.includes("[queues.embed-dlq]"))![2]!;
    const dir = await makeTempDir();
    const fromYaml = await loadDeclaredConfig(await writeConfig(dir, "sluice.yaml", yamlText), "000000000000");
    const fromToml = await loadDeclaredConfig(await writeConfig(dir, "sluice.toml", tomlText), "000000000000");
    const sorted = (c: typeof fromYaml.config): unknown => c.sections.map((s) => ({ ...s, queues: [...s.queues].sort((a, b) => (a.name < b.name ? -1 : 1)) }));
    expect(sorted(fromToml.config)).toEqual(sorted(fromYaml.config));
    expect(fromYaml.config.sections.map((s) => s.queues.length)).toEqual([3, 1]);
    const shown = /^sluice: (sluice\.yaml:\d+: .*)$/m.exec(doc)![1]!;
    await writeFile(join(dir, "sluice.yaml"), yamlText.replace("visibilityTimeoutSeconds: 60", "visibilityTimeoutSeconds: 50000"));
    await expect(loadDeclaredConfig(join(dir, "sluice.yaml"), "000000000000")).rejects.toThrow(`${dir}/${shown}`);
  });

  it("serves GET /v1/config to admin tokens only", async () => {
    const dir = await makeTempDir();
    const credentialsFile = await writeConfig(dir, "creds.yaml", "tokens:\n  - { name: reader, token: reader-token-0123456789, scopes: [read] }\n  - { name: admin, token: admin-token-0123456789, scopes: [admin] }\n");
    const server = await startServer({ port: 0, dataDir: await makeTempDir(), logger: createLogger({ level: "silent" }), credentialsFile });
    running.add(server);
    const get = (token: string): Promise<Response> => fetch(`${server.url}/v1/config`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get("reader-token-0123456789")).status).toBe(403);
    const res = await get("admin-token-0123456789");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
  });
});
