/**
 * `sluice serve` as a new user meets it: a configuration mistake ends the start with one line
 * naming the problem and exit status 2 (no stack trace, no wrong label, no spin); SIGHUP reloads
 * the credentials file without dropping a kept-alive connection, and no secret reaches the logs.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killAllChildren, repoRoot, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(async () => {
  await killAllChildren();
  await removeTempDirs();
});

/**
 * Runs `serve` to its exit. `obeyPermissions` runs it without the capabilities that let root
 * ignore file permissions (util-linux's setpriv): still root, so it reads the checkout wherever
 * that lies, but a directory without write permission is refused to it as to anyone.
 */
function serveUntilExit(args: string[], opts: { obeyPermissions?: boolean } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const serve = [process.execPath, "--import", "tsx", "src/cli/main.ts", "serve", "--port", "0", ...args];
    const dropped = "-dac_override,-dac_read_search";
    const [command, ...commandArgs] = opts.obeyPermissions ? ["setpriv", `--inh-caps=${dropped}`, `--bounding-set=${dropped}`, ...serve] : serve;
    const child = spawn(command!, commandArgs, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve ${args.join(" ")} did not exit within 90 s\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 90_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function expectOneLineFailure(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trim().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^sluice: /);
  expect(lines[0]).toMatch(pattern);
}

describe("clear failures at start", { timeout: 120_000 }, () => {
  it("--data-dir pointing at a file", async () => {
    const file = join(await makeTempDir(), "not-a-dir");
    await writeFile(file, "x");
    expectOneLineFailure(await serveUntilExit(["--data-dir", file]), /--data-dir .*not-a-dir is a file, not a directory/);
  });

  it("--data-dir under /proc: refused at once instead of spinning", async () => {
    expectOneLineFailure(await serveUntilExit(["--data-dir", "/proc/self"]), /--data-dir \/proc\/self is on the proc pseudo-filesystem/);
    // A path that doesn't exist there yet: node's recursive mkdir would never return.
    expectOneLineFailure(await serveUntilExit(["--data-dir", "/proc/x"]), /--data-dir \/proc\/x is on the proc pseudo-filesystem/);
  });

  it("an unresolvable --host", async () => {
    expectOneLineFailure(await serveUntilExit(["--host", "no-such-host.invalid", "--allow-anonymous", "--data-dir", await makeTempDir()]), /--host no-such-host\.invalid does not resolve/);
  });

  it("an unwritable data dir: named as such, not as 'cannot listen'", async () => {
    const dir = await makeTempDir();
    const readOnly = join(dir, "ro");
    await mkdir(readOnly, { mode: 0o555 });
    await chmod(readOnly, 0o555);
    await chmod(dir, 0o755);
    // Root ignores permissions unless it runs without the capabilities for that.
    const asRoot = process.getuid?.() === 0;
    const result = await serveUntilExit(["--data-dir", readOnly], { obeyPermissions: asRoot });
    expectOneLineFailure(result, /--data-dir .*ro is not writable: permission denied/);
  });

  it("a broken credentials file, without quoting its secret", async () => {
    const dir = await makeTempDir();
    const file = join(dir, "creds.toml");
    await writeFile(file, '[[tokens]]\ntoken = "a-secret-token-0123456789"\nscope = ["read"]\n');
    const result = await serveUntilExit(["--data-dir", dir, "--credentials-file", file]);
    expectOneLineFailure(result, /unknown field "scope"/);
    expect(result.stderr).not.toContain("a-secret-token-0123456789");
  });
});

describe("SIGHUP", { timeout: 120_000 }, () => {
  it("reloads the credentials file; a kept-alive connection carries on with the new token", async () => {
    const dir = await makeTempDir();
    const file = join(dir, "creds.json");
    const before = "token-before-0123456789";
    const after = "token-after-0123456789";
    await writeFile(file, JSON.stringify({ tokens: [{ name: "t", token: before }] }));
    const srv = await spawnCli({ dataDir: dir, extraArgs: ["--credentials-file", file] });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (token: string): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = http.get(`${srv.url}/v1/queues/hup`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on("error", reject);
      });
    expect((await get(before)).status).toBe(404); // authenticated: the queue just doesn't exist
    expect((await get(after)).status).toBe(401);
    await writeFile(file, JSON.stringify({ tokens: [{ name: "t", token: after }] }));
    srv.child.kill("SIGHUP");
    const deadline = Date.now() + 20_000;
    const logged = (): string => srv.stdout() + srv.stderr();
    while (!logged().includes("credentials reloaded") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const reloaded = logged().split("\n").find((line) => line.includes("credentials reloaded"));
    expect(JSON.parse(reloaded!)).toMatchObject({ keys: 0, tokens: 1 });
    const answer = await get(after);
    expect(answer).toEqual({ status: 404, reused: true });
    expect((await get(before)).status).toBe(401);
    agent.destroy();
    srv.child.kill("SIGTERM");
    await srv.exited;
    for (const secret of [before, after]) expect(srv.stdout() + srv.stderr()).not.toContain(secret);
  });
});
