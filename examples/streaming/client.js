/**
 * The client: submits a prompt and prints the story's tokens as they come.
 *   node examples/streaming/client.js "In the morning"
 * SLUICE_URL picks the server (default http://127.0.0.1:9324).
 */
import { Sluice } from "@sluice/client";

const prompt = process.argv.slice(2).join(" ") || "In the morning";
const sluice = new Sluice({ url: process.env.SLUICE_URL ?? "http://127.0.0.1:9324" });

process.stdout.write(prompt);
let tokens = 0;
// Submit and stream in one call: ends when the job does, throws if it fails.
for await (const token of sluice.queue("stories").stream({ prompt })) {
  process.stdout.write(token);
  tokens++;
}
process.stdout.write(`\n(${tokens} tokens)\n`);
