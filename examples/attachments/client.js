/**
 * The client: sends a picture as the job's attachment and saves the worker's result.
 *   node examples/attachments/client.js examples/attachments/shapes.pgm edges.pgm
 * SLUICE_URL picks the server (default http://127.0.0.1:9324).
 */
import { writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { Sluice } from "@sluice/client";

const [input = "examples/attachments/shapes.pgm", output = "edges.pgm"] = process.argv.slice(2);
const sluice = new Sluice({ url: process.env.SLUICE_URL ?? "http://127.0.0.1:9324" });

// The file is streamed from disk to the server's blob store; the job carries its id.
const job = await sluice.queue("edges").submit({}, { attachments: { image: { path: input } } });
const sent = job.job.attachments.image;
console.log(`sent ${basename(input)}: ${sent.size} bytes, ${sent.contentType}`);

const done = await job.wait();
if (done.status !== "succeeded") throw new Error(`the job ${done.status}: ${done.error?.message}`);
const edges = done.outputAttachments.edges;
await writeFile(output, await edges.bytes()); // checked against the blob's SHA-256 on the way
console.log(`${output}: ${done.output.width}×${done.output.height}, ${done.output.edgePixels} edge pixels, ${edges.size} bytes, sha256 ${edges.sha256.slice(0, 12)}…`);
