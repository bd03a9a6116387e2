/**
 * The in-process jobs cycle (jobs-inprocess.ts) for instruction counts, which load on a shared
 * machine doesn't blur: under callgrind with `--dump-before=uv_os_getpriority`, the two
 * os.getPriority() calls around the measured rounds cut the counts into three dumps, and the
 * second (`…out.2`) is those rounds alone. Divide its `summary:` line by the jobs printed.
 *
 * Usage: valgrind --tool=callgrind --dump-before=uv_os_getpriority --callgrind-out-file=/tmp/cg \
 *          node --import tsx bench/jobs-cycle-instructions.ts [jobs, default 3008]
 *        grep summary: /tmp/cg.2    (callgrind_annotate --inclusive=yes /tmp/cg.2: by function)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { openJobsCycle } from "./jobs-cycle.js";

const jobsWanted = Number(process.argv[2] ?? 3008);
const round = 32;
const dir = mkdtempSync(join(tmpdir(), "sluice-jobs-instructions-"));
const { store, cycle } = openJobsCycle({ store: { filename: join(dir, "s.db"), pipelinedSync: true }, round, inputBytes: 1000 });

let acks = await cycle([]);
for (let i = 0; i < 50; i++) acks = await cycle(acks); // warm-up
getPriority(); // the first cut
const rounds = Math.ceil(jobsWanted / round);
for (let i = 0; i < rounds; i++) acks = await cycle(acks);
getPriority(); // the second
console.log(`${rounds * round} jobs`);
await store.close();
rmSync(dir, { recursive: true, force: true });
