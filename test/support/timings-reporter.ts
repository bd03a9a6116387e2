/**
 * A vitest reporter that writes where each test file's wall time goes (import, hooks and tests,
 * queue wait) to .tmp/test-timings.json and prints the slowest files, so suite-time work starts
 * from measurements: `npx vitest run --reporter=default --reporter=./test/support/timings-reporter.ts`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

interface FileTiming {
  file: string;
  project: string;
  /** From the moment the file was handed to a worker to its end, in ms. */
  wallMs: number;
  collectMs: number;
  setupMs: number;
  /** Tests and hooks together. */
  durationMs: number;
  tests: number;
}

export default class TestTimingsReporter implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly timings: FileTiming[] = [];
  private runStart = performance.now();

  onTestRunStart(): void {
    this.runStart = performance.now();
  }

  onTestModuleQueued(module: TestModule): void {
    this.started.set(module.id, performance.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    this.timings.push({
      file: relative(process.cwd(), module.moduleId),
      project: module.project.name,
      wallMs: Math.round(performance.now() - (this.started.get(module.id) ?? this.runStart)),
      collectMs: Math.round(d.collectDuration),
      setupMs: Math.round(d.setupDuration),
      durationMs: Math.round(d.duration),
      tests: [...module.children.allTests()].length,
    });
  }

  onTestRunEnd(): void {
    const totalMs = Math.round(performance.now() - this.runStart);
    this.timings.sort((a, b) => b.wallMs - a.wallMs);
    mkdirSync(".tmp", { recursive: true });
    writeFileSync(".tmp/test-timings.json", JSON.stringify({ totalMs, files: this.timings }, null, 2));
    const sum = this.timings.reduce((s, t) => s + t.wallMs, 0);
    console.log(`\nTest files: ${this.timings.length}, run ${(totalMs / 1000).toFixed(0)} s, file wall time summed ${(sum / 1000).toFixed(0)} s; slowest:`);
    for (const t of this.timings.slice(0, 15)) {
      console.log(`  ${(t.wallMs / 1000).toFixed(1).padStart(6)} s  (import ${(t.collectMs / 1000).toFixed(1)} s, tests+hooks ${(t.durationMs / 1000).toFixed(1)} s)  ${t.project}  ${t.file}`);
    }
  }
}
