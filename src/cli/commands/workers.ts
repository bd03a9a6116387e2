/**
 * `sluice workers`: the workers seen in the last minute on every node (GET /v1/workers), as a
 * table, or with --json as the answer's JSON (for jq).
 */
import type { Command } from "commander";
import { type ConnectionFlags, addConnectionOptions, exitWithError, print, sluiceFromFlags } from "./sdk-connection.js";

interface WorkersFlags extends ConnectionFlags {
  json?: boolean;
}

export function registerWorkersCommand(program: Command): void {
  addConnectionOptions(
    program
      .command("workers")
      .description("Workers seen in the last 60 s (those that send a workerId), on every node: their queues, labels, running jobs.")
      .option("--json", "print the answer's JSON instead of a table"),
  ).action((flags: WorkersFlags) =>
    sluiceFromFlags(flags)
      .workers()
      .then((workers) => {
        if (flags.json) return print({ workers });
        if (workers.length === 0) return console.log("No workers seen in the last 60 s.");
        const rows = workers.map((w) => [
          w.workerId,
          w.queues.join(","),
          w.labels === null ? "-" : Object.entries(w.labels).map(([k, v]) => `${k}=${v}`).join(","),
          String(w.running),
          w.lastSeenAt,
        ]);
        const table = [["WORKER", "QUEUES", "LABELS", "RUNNING", "LAST SEEN"], ...rows];
        const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
        for (const r of table) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join("  ").trimEnd());
      })
      .catch(exitWithError),
  );
}
