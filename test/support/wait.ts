/**
 * Bounded polling of a condition on server state. Never a pass condition on its own: it only
 * waits for something observable to become true, and fails loudly when it doesn't in time.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 5;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? "condition"}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Resolves with the settled value of `p`, or rejects if it doesn't settle within `ms`. */
export async function within<T>(ms: number, p: Promise<T>, what = "promise"): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
