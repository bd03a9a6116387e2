/**
 * The SDK installs on its own, with no native dependencies (client/README.md). client/ is copied out of
 * the repo (no ancestor's node_modules/.bin to borrow a `tsc` from), given its declared
 * devDependencies at the versions the root lockfile pins (npm's cache first: `npm ci` put them
 * there), and packed with `npm pack` (its prepare script builds dist/). The tarball is installed
 * into an empty directory with `npm install --offline` — it has no dependencies, so nothing is
 * fetched — and used from there by a plain ESM script (no tsx, no repo on the resolution path)
 * that submits a job to a real server, works it and gets the result — and README.md's SDK
 * snippet, copied there, runs as written.
 */
import { execFile } from "node:child_process";
import { cp, readFile, readdir, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { expectedOutputPattern, oneLine } from "./snippets.js";

const run = promisify(execFile);

/**
 * The environment of a user outside this repo: without the npm_* variables `npm test` sets (they
 * would point the child npm at this repo), and without the node_modules/.bin directories npm and
 * npx put on PATH (this repo's `tsc` among them).
 */
const cleanEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_"))),
  PATH: (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !/[\\/]node_modules[\\/]\.bin$/.test(dir))
    .join(delimiter),
};

function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return run("npm", [...args, "--no-update-notifier"], { cwd, env: cleanEnv, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
}

/** Every file under `dir`, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

interface LockEntry {
  version: string;
  dependencies?: Record<string, string>;
}

/**
 * A lockfile for a standalone copy of client/: its devDependencies as the root lockfile pins
 * them, so `npm ci` there installs the very versions the repo builds with.
 */
async function standaloneClientLock(pkg: { name: string; version: string; devDependencies?: Record<string, string> }): Promise<object> {
  const root = JSON.parse(await readFile(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const packages: Record<string, unknown> = { "": { name: pkg.name, version: pkg.version, devDependencies: pkg.devDependencies ?? {} } };
  for (const name of Object.keys(pkg.devDependencies ?? {})) {
    const entry = root.packages[`node_modules/${name}`];
    if (!entry) throw new Error(`client/package.json's devDependency ${name} is not in the root package-lock.json: run npm install`);
    // Enough for a devDependency without dependencies of its own (typescript); others would need their tree.
    expect(entry.dependencies, `${name}'s dependencies`).toBeUndefined();
    packages[`node_modules/${name}`] = entry;
  }
  return { name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages };
}

const script = `
import { Sluice } from "@sluice/client";

const sluice = new Sluice({ url: process.env.SLUICE_URL });
const queue = sluice.queue("packed-sdk");
const worker = queue.work(async (job) => ({ upper: job.input.text.toUpperCase(), attempt: job.attempt }));
const handle = await queue.submit({ text: "hello from a tarball" });
const done = await handle.wait({ timeoutMs: 20000 });
await worker.close();
console.log(JSON.stringify({ resolved: import.meta.resolve("@sluice/client"), id: handle.id, status: done.status, output: done.output }));
`;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("the @sluice/client package", () => {
  it("packs, installs offline into an empty directory with no dependencies and no native files, and runs a job from there", async () => {
    const clientPkg = JSON.parse(await readFile(join(repoRoot, "client/package.json"), "utf8")) as { name: string; version: string; devDependencies?: Record<string, string> };
    const rootPkg = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    // It builds with the compiler the repo builds with.
    expect(clientPkg.devDependencies?.typescript).toBe(rootPkg.devDependencies.typescript);

    const standalone = await makeTempDir("sluice-sdk-src-");
    await cp(join(repoRoot, "client"), standalone, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });
    await writeFile(join(standalone, "package-lock.json"), JSON.stringify(await standaloneClientLock(clientPkg), null, 2));
    await npm(["ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"], standalone);
    const packDir = await makeTempDir("sluice-sdk-pack-");
    const packed = await npm(["pack", "--json", "--pack-destination", packDir], standalone);
    const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    const packedFiles = info.files.map((f) => f.path);
    expect(packedFiles).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/index.d.ts"]));
    expect(packedFiles.filter((f) => f.endsWith(".node") || f.endsWith("binding.gyp"))).toEqual([]);

    const app = await makeTempDir("sluice-sdk-app-");
    await writeFile(join(app, "package.json"), JSON.stringify({ name: "sdk-install-check", private: true, type: "module" }));
    await npm(["install", "--no-audit", "--no-fund", "--offline", join(packDir, info.filename)], app);

    const installedDir = join(app, "node_modules/@sluice/client");
    const installed = JSON.parse(await readFile(join(installedDir, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies", "bundleDependencies", "bundledDependencies"]) {
      expect(installed[field], field).toBeUndefined();
    }
    // No install-time build: nothing that would compile a native addon when a user installs it.
    expect(Object.keys(installed.scripts ?? {}).filter((s) => ["preinstall", "install", "postinstall"].includes(s))).toEqual([]);
    // The package alone was installed, and nothing in it is native.
    expect((await readdir(join(app, "node_modules"))).filter((d) => !d.startsWith("."))).toEqual(["@sluice"]);
    expect(await readdir(join(app, "node_modules/@sluice"))).toEqual(["client"]);
    expect((await filesUnder(app)).filter((f) => f.endsWith(".node") || f.endsWith("binding.gyp"))).toEqual([]);

    await writeFile(join(app, "use-sdk.mjs"), script);
    const { stdout } = await run(process.execPath, ["use-sdk.mjs"], { cwd: app, env: { ...cleanEnv, SLUICE_URL: server.url }, timeout: 30_000 });
    const result = JSON.parse(stdout) as { resolved: string; id: string; status: string; output: unknown };
    expect(result.resolved).toBe(pathToFileURL(join(installedDir, "dist/index.js")).href);
    expect(result).toMatchObject({ status: "succeeded", output: { upper: "HELLO FROM A TARBALL", attempt: 1 } });
    // The job the script ran is on this server.
    expect((await server.app.inject({ method: "GET", url: `/v1/jobs/${result.id}` })).json()).toMatchObject({ job: { status: "succeeded", queue: "packed-sdk" } });

    // README.md's SDK snippet, copied into this directory outside the repository, runs as written
    // (only the URL swapped) with the installed tarball, and prints what its comment says.
    const readme = await readFile(join(repoRoot, "README.md"), "utf8");
    const [snippet] = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((block) => block.includes("@sluice/client"));
    expect(readme).toContain(`npm pack ./client                          # → ${info.filename}`);
    await writeFile(join(app, "readme-snippet.mjs"), snippet!.replaceAll("http://127.0.0.1:9324", server.url));
    const fromReadme = await run(process.execPath, ["readme-snippet.mjs"], { cwd: app, env: cleanEnv, timeout: 30_000 });
    expect(oneLine(fromReadme.stdout)).toMatch(expectedOutputPattern(snippet!));
  });
});
