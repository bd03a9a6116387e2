/**
 * The container image: the Dockerfile builds (on a base made locally, scripts/container-base-image.sh)
 * and the image serves the SQS and jobs APIs with credentials from the environment, as a non-root
 * user, healthy by its own HEALTHCHECK, and keeps its data in the /data volume across containers.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createReadStream, existsSync, readFileSync, readdirSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const run = promisify(execFile);
const podman = ["--runtime", "runc", "--cgroup-manager=cgroupfs"];
const image = "localhost/sluice:test";
const suffix = randomBytes(4).toString("hex");
const volume = `sluice-test-data-${suffix}`;
const containers: string[] = [];
const keys = { accessKeyId: "AKIDCONTAINERTEST", secretAccessKey: randomBytes(16).toString("hex") };
const token = randomBytes(20).toString("hex");

async function p(args: string[], timeout = 60_000): Promise<string> {
  const { stdout } = await run("podman", [...podman, ...args], { cwd: repoRoot, timeout, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** What this machine lacks to build and run the image, as one instruction (empty: nothing). */
function missingTools(): string {
  const onPath = (name: string) => (process.env.PATH ?? "").split(":").some((dir) => existsSync(join(dir, name)));
  const packages = ["podman", "runc", "mmdebstrap"].filter((name) => !onPath(name));
  const dropIns = "/etc/containers/containers.conf.d";
  const ulimitsOff = existsSync(dropIns) && readdirSync(dropIns).some((f) => f.endsWith(".conf") && /default_ulimits\s*=\s*\[\s*\]/.test(readFileSync(join(dropIns, f), "utf8")));
  const steps = [
    ...(packages.length > 0 ? [`sudo apt-get install -y ${packages.join(" ")}`] : []),
    ...(ulimitsOff ? [] : [`sudo mkdir -p ${dropIns} && printf '[containers]\\ndefault_ulimits = []\\n' | sudo tee ${dropIns}/ulimits.conf`]),
  ];
  return steps.length === 0 ? "" : `The container image test needs Podman set up (as root, scripts/test-system-deps.sh does it): ${steps.join(" && ")}`;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/**
 * Serves this checkout's compiled better-sqlite3 as its prebuilt-binary mirror, so the image's deps
 * stage takes it instead of compiling (the base image runs this machine's Node, so the ABI matches).
 */
async function serveLocalPrebuild(): Promise<{ url: string; close: () => Promise<void> }> {
  const moduleDir = join(repoRoot, "node_modules/better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(moduleDir, "package.json"), "utf8")) as { version: string };
  const tarball = join(await makeTempDir("sluice-prebuild-"), `better-sqlite3-v${version}-node-v${process.versions.modules}-linux-${process.arch}.tar.gz`);
  await run("tar", ["-czf", tarball, "-C", moduleDir, "build/Release/better_sqlite3.node"]);
  const server = createHttpServer((req, res) => {
    if (req.url !== `/v${version}/${basename(tarball)}`) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/gzip" });
    createReadStream(tarball).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A container of the image on the host's network, credentials in its environment, /data on the test's volume. */
async function start(port: number): Promise<string> {
  const name = `sluice-test-${suffix}-${containers.length}`;
  containers.push(name);
  const env = { SLUICE_PORT: String(port), SLUICE_ACCESS_KEY_ID: keys.accessKeyId, SLUICE_SECRET_ACCESS_KEY: keys.secretAccessKey, SLUICE_API_TOKEN: token, SLUICE_SHUTDOWN_DRAIN_SECONDS: "0" };
  await p(["run", "-d", "--name", name, "--network=host", "-v", `${volume}:/data`, ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]), image]);
  return name;
}

describe("the container image", () => {
  let port: number;
  let url: string;
  let sqs: SQSClient;
  let first: string;
  let jobId: string;

  beforeAll(async () => {
    const missing = missingTools();
    if (missing !== "") throw new Error(missing);
    await run("bash", ["scripts/container-base-image.sh", "node:20-bookworm-slim"], { cwd: repoRoot, timeout: 600_000 });
    // The npm cache this checkout was installed from: the build reads its packages from there, not the registry.
    const { stdout: npmCache } = await run("npm", ["config", "get", "cache"], { cwd: repoRoot });
    // What it lacks comes from the registry, through this machine's TLS proxy if it has one.
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    const caArgs = ca === undefined || ca === "" ? [] : ["-v", `${ca}:/build-ca.crt:ro`, "--build-arg", "NODE_EXTRA_CA_CERTS=/build-ca.crt"];
    const prebuild = await serveLocalPrebuild();
    try {
      const mirror = ["--build-arg", `better_sqlite3_binary_host=${prebuild.url}`];
      await p(["build", "--isolation", "chroot", "--network=host", "--pull=never", "--format", "docker", "-v", `${npmCache.trim()}:/npm-cache`, "--build-arg", "npm_config_cache=/npm-cache", "--build-arg", "npm_config_prefer_offline=true", ...mirror, ...caArgs, "-t", image, "."], 900_000);
    } finally {
      await prebuild.close();
    }
    await p(["volume", "create", volume]);
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    sqs = new SQSClient({ endpoint: url, region: "us-east-1", credentials: keys });
  }, 1_200_000);

  afterAll(async () => {
    sqs?.destroy();
    for (const name of containers) await p(["rm", "-f", "-t", "0", name]).catch(() => undefined);
    await p(["volume", "rm", "-f", volume]).catch(() => undefined);
    await removeTempDirs();
  });

  async function ready(): Promise<void> {
    await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true, { timeoutMs: 30_000, intervalMs: 100, what: `${url}/readyz` });
  }
  const jobs = async (path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  it("is configured as documented: non-root user, /data volume, port 9324, node as the entrypoint", async () => {
    const [inspected] = JSON.parse(await p(["image", "inspect", image])) as { Config: Record<string, unknown>; Healthcheck: { Test: string[] } }[];
    expect(inspected!.Config).toMatchObject({ User: "sluice", ExposedPorts: { "9324/tcp": {} }, Volumes: { "/data": {} }, Entrypoint: ["node", "--max-semi-space-size=32", "/app/dist/cli/main.js"], Cmd: ["serve"] });
    expect(inspected!.Healthcheck.Test.join(" ")).toContain("/readyz");
  });

  it("refuses to serve anonymous requests on 0.0.0.0 when no credentials are given", async () => {
    const out = await run("podman", [...podman, "run", "--rm", "--network=host", "-e", `SLUICE_PORT=${port}`, image], { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("Refusing to serve anonymous requests on 0.0.0.0");
  });

  it("serves SQS and jobs as a non-root user, healthy by its HEALTHCHECK", async () => {
    first = await start(port);
    await ready();
    expect(await p(["exec", first, "id", "-u"])).toBe("10001");
    // Runs the image's HEALTHCHECK command in the container; a failing check makes this throw.
    await p(["healthcheck", "run", first]);

    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "in-container" }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "round trip" }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "kept for the next container" }));
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 5 }));
    expect(got.Messages?.map((m) => m.Body)).toEqual(["round trip"]);
    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: got.Messages![0]!.ReceiptHandle }));

    const submitted = await jobs("/v1/queues/embed/jobs", { input: { text: "hello" } });
    expect(submitted.status).toBe(201);
    const leased = await jobs("/v1/queues/embed/leases", { max: 1 });
    const [job] = leased.json.jobs as { id: string; leaseId: string; input: unknown }[];
    expect(job).toMatchObject({ id: (submitted.json.job as { id: string }).id, input: { text: "hello" } });
    const completed = await jobs(`/v1/jobs/${job!.id}/complete`, { leaseId: job!.leaseId, output: { vector: [1, 2] } });
    expect(completed.json.job).toMatchObject({ status: "succeeded", output: { vector: [1, 2] } });
    jobId = job!.id;
  });

  it("keeps its data in the /data volume: a new container on it has the queue, the message and the job", async () => {
    await p(["stop", "-t", "30", first]);
    expect(await p(["inspect", "--format", "{{.State.ExitCode}}", first])).toBe("0");
    await p(["rm", first]);

    await start(port);
    await ready();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "in-container" }));
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 5 }));
    expect(got.Messages?.map((m) => m.Body)).toEqual(["kept for the next container"]);
    const job = (await (await fetch(`${url}/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { job: unknown };
    expect(job.job).toMatchObject({ id: jobId, status: "succeeded", output: { vector: [1, 2] } });
  });
});
