/** Process CPU (user + system) per call of `fn`, in µs, over `n` calls: the in-process cost benches' measure. */
export function cpuMicrosPer(n: number, fn: () => void): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}

/**
 * Runs `cycle` (answering how many messages it moved) until `messages` have moved; answers the
 * line the in-process SQS benches print: process CPU per message, split user / system, and msgs/s.
 */
export async function cpuPerMessageRound(messages: number, cycle: () => Promise<number>): Promise<string> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (n < messages) n += await cycle();
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  return `${n} messages: ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU per message (user ${(cpu.user / n).toFixed(1)}, system ${(cpu.system / n).toFixed(1)}), ${(n / seconds).toFixed(0)} msgs/s`;
}
