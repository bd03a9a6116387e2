/**
 * A preload that records a Sluice server's memory by part while a bench runs, to see what its
 * resident set is made of at the peak (docs/benchmarks.md, "Burst: a deep backlog"):
 *
 *   MEMORY_SAMPLES=/tmp/mem NODE_OPTIONS="--import $PWD/bench/memory-sampler.mjs" npm run bench -- --compare burst …
 *
 * (an absolute path: a --baseline-rev server runs from its snapshot). Only a process whose
 * arguments include `serve` samples (the bench process ignores it). Each
 * server writes `<prefix>.<pid>.csv` (every MEMORY_SAMPLE_MS, default 200) and
 * `<prefix>.<pid>.peak.json` (the sample with the largest resident set, with the heap's spaces).
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { PerformanceObserver, constants } from "node:perf_hooks";
import v8 from "node:v8";

const prefix = process.env.MEMORY_SAMPLES;
if (prefix !== undefined && process.argv.includes("serve")) {
  const out = `${prefix}.${process.pid}`;
  const mib = (bytes) => bytes / 1048576;
  /** A `Key:   N kB` line of /proc/self/status, in MiB. */
  const statusMiB = (status, key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) / 1024;
  const gc = { majors: 0, pauseMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.pauseMs += entry.duration;
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.majors++;
    }
  }).observe({ entryTypes: ["gc"] });

  const columns = ["t", "cpuS", "majorGcs", "gcPauseMs", "rss", "rssAnon", "rssFile", "v8Physical", "newSpace", "oldSpace", "oldUsed", "codeAndLarge", "external", "arrayBuffers", "otherAnon"];
  writeFileSync(`${out}.csv`, `${columns.join(",")}\n`);
  const t0 = performance.now();
  let peak = 0;
  setInterval(() => {
    const status = readFileSync("/proc/self/status", "utf8");
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s]));
    const physical = (name) => mib(spaces[name]?.physical_space_size ?? 0);
    const usage = process.memoryUsage();
    const cpu = process.cpuUsage();
    const v8Physical = mib(v8.getHeapStatistics().total_physical_size);
    const rssAnon = statusMiB(status, "RssAnon");
    const sample = {
      t: (performance.now() - t0) / 1000,
      cpuS: (cpu.user + cpu.system) / 1e6,
      majorGcs: gc.majors,
      gcPauseMs: gc.pauseMs,
      rss: statusMiB(status, "VmRSS"),
      rssAnon,
      rssFile: statusMiB(status, "RssFile"),
      v8Physical,
      newSpace: physical("new_space"),
      oldSpace: physical("old_space"),
      oldUsed: mib(spaces.old_space?.space_used_size ?? 0),
      codeAndLarge: physical("code_space") + physical("large_object_space") + physical("code_large_object_space") + physical("new_large_object_space"),
      external: mib(usage.external),
      arrayBuffers: mib(usage.arrayBuffers),
      // Anonymous memory outside V8's heap: malloc (SQLite's page cache, buffers), thread stacks.
      otherAnon: rssAnon - v8Physical,
    };
    appendFileSync(`${out}.csv`, `${columns.map((c) => sample[c].toFixed(1)).join(",")}\n`);
    if (sample.rss > peak) {
      peak = sample.rss;
      writeFileSync(`${out}.peak.json`, JSON.stringify({ ...sample, spaces: Object.values(spaces) }, null, 1));
    }
  }, Number(process.env.MEMORY_SAMPLE_MS ?? 200)).unref();
}
