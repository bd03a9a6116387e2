/**
 * How far V8 lets the old generation grow past what its last full collection kept. By default
 * (on a machine with 2 GiB or more) it may grow to 4× that, so a busy server's resident set
 * swells with promoted request garbage long before it is collected.
 */
import { setFlagsFromString } from "node:v8";

/** The old generation may grow by half of what the last full collection kept (V8's floor is 16 MiB). */
export const heapGrowingPercent = 50;

const flagPattern = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets the growth bound for the rest of the process (V8 reads it at each collection), unless
 * node was started with its own `--heap-growing-percent`. Returns whether it set it.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => flagPattern.test(arg))) return false;
  setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
  return true;
}
