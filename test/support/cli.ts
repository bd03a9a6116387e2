/**
 * Spawns the real CLI (`src/cli/main.ts serve`) as a child process and waits for its
 * "Sluice listening on http://127.0.0.1:<port>" line. `killAllChildren()` (afterAll/afterEach)
 * SIGKILLs any child still running, so no test leaves a server behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { testStoreArgs } from "./test-store.js";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export interface CliServer {
  child: ChildProcess;
  pid: number;
  url: string;
  port: number;
  /** Resolves when the process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

const children = new Set<ChildProcess>();

const listeningLine = /Sluice listening on (http:\/\/127\.0\.0\.1:(\d+))/;

/** `port` (default 0: any free one) lets a restart come back where its clients expect it. */
export async function spawnCli(opts: { dataDir: string; port?: number; extraArgs?: string[]; readyTimeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<CliServer> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "serve", "--port", String(opts.port ?? 0), "--data-dir", opts.dataDir, ...(await testStoreArgs(opts.dataDir)), ...(opts.extraArgs ?? [])],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...opts.env } },
  );
  children.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.once("exit", (code, signal) => {
      children.delete(child);
      res({ code, signal });
    });
  });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const ready = await new Promise<{ url: string; port: number }>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`CLI not ready within ${readyTimeoutMs} ms\nstdout: ${out}\nstderr: ${err}`)), readyTimeoutMs);
    const onData = (): void => {
      const m = listeningLine.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        res({ url: m[1]!, port: Number(m[2]) });
      }
    };
    child.stdout!.on("data", onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      rej(new Error(`CLI exited before listening (code ${code}, signal ${signal})\nstdout: ${out}\nstderr: ${err}`));
    });
  });
  return { child, pid: child.pid!, ...ready, exited, stdout: () => out, stderr: () => err };
}

export async function killAllChildren(): Promise<void> {
  const waits = [...children].map(
    (c) =>
      new Promise<void>((res) => {
        if (c.exitCode !== null || c.signalCode !== null) return res();
        c.once("exit", () => res());
        c.kill("SIGKILL");
      }),
  );
  await Promise.all(waits);
}

/** Runs `sluice <args>` to its exit (with `env` added to this process's), SIGKILLed after `timeoutMs`. */
export function runCliToExit(args: string[], timeoutMs = 60_000, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      rej(new Error(`sluice ${args.join(" ")} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      children.delete(child);
      res({ code, stdout, stderr });
    });
  });
}
