/** Process CPU (user + system) per call of `fn`, in µs, over `n` calls: the in-process cost benches' measure. */
export function cpuMicrosPer(n: number, fn: () => void): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}
