/**
 * A 1 GiB attachment through the fs blob storage, up and down, with the server in a child process:
 * its peak resident memory (VmHWM) stays under 300 MB — the bytes are streamed between socket and
 * disk, never held. The client makes the bytes from a stream and keeps only their SHA-256.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { afterAll, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(async () => {
  await killAllChildren();
  await removeTempDirs();
});

const totalBytes = 1024 ** 3;
const chunkBytes = 1024 * 1024;

/** Peak resident set of a process, in bytes (Linux: /proc/<pid>/status). */
function peakRssBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) * 1024;
}

/** PUTs `totalBytes` made chunk by chunk (each chunk different), hashing them as they go. */
function putGenerated(url: string): Promise<{ status: number; sha256: string; body: string }> {
  const hash = createHash("sha256");
  const chunk = Buffer.alloc(chunkBytes);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "PUT", headers: { "content-type": "application/octet-stream", "content-length": String(totalBytes) } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, sha256: hash.digest("hex"), body }));
    });
    req.on("error", reject);
    let sent = 0;
    const write = (): void => {
      while (sent < totalBytes) {
        chunk.writeUInt32LE(sent / chunkBytes, 0); // every chunk distinct: a dropped or repeated one changes the digest
        hash.update(chunk);
        sent += chunkBytes;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

function getHashed(url: string): Promise<{ status: number; size: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      const hash = createHash("sha256");
      let size = 0;
      res.on("data", (d: Buffer) => {
        size += d.length;
        hash.update(d);
      });
      res.on("end", () => resolve({ status: res.statusCode!, size, sha256: hash.digest("hex") }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

it("uploads and downloads 1 GiB with the server's RSS under 300 MB", async () => {
  const server = await spawnCli({ dataDir: await makeTempDir("sluice-blob-mem-") });
  const made = (await (await fetch(`${server.url}/v1/blobs`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json()) as { blobId: string; uploadUrl: string };
  const up = await putGenerated(made.uploadUrl);
  expect(up.status, up.body).toBe(200);
  expect(JSON.parse(up.body)).toMatchObject({ size: totalBytes, sha256: up.sha256 });
  const blob = (await (await fetch(`${server.url}/v1/blobs/${made.blobId}`)).json()) as { downloadUrl: string; sha256: string };
  const down = await getHashed(blob.downloadUrl);
  expect(down).toEqual({ status: 200, size: totalBytes, sha256: up.sha256 });
  expect(peakRssBytes(server.pid)).toBeLessThan(300 * 1024 * 1024);
}, 120_000);
