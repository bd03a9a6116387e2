/**
 * Core's CronCompiler on croner (zero dependencies, IANA time zones through Intl): 5 fields, or 6
 * with seconds first. Its DST rules are cron's own: a fixed time that a spring-forward skips runs
 * when the clock has jumped, one that a fall-back repeats runs once; interval patterns (`*\/15`)
 * follow real time.
 */
import { Cron } from "croner";
import { type CronCompiler, fail } from "../core/index.js";

export const cronCompiler: CronCompiler = (expression, timezone) => {
  let cron: Cron;
  try {
    cron = new Cron(expression, { timezone, mode: "5-or-6-parts", paused: true });
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^CronPattern: /, "") : String(err);
    return fail("ValidationFailed", `cron ${JSON.stringify(expression)} is not a cron expression of 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first: ${reason}`);
  }
  const nextAfter = (afterMs: number): number | undefined => cron.nextRun(new Date(afterMs))?.getTime();
  if (nextAfter(0) === undefined) fail("ValidationFailed", `cron ${JSON.stringify(expression)} never matches a date.`);
  return {
    nextAfter,
    // croner's previousRuns excludes the date it is given.
    latestAtOrBefore: (atMs, n) => cron.previousRuns(n, new Date(atMs + 1)).map((d) => d.getTime()),
  };
};
