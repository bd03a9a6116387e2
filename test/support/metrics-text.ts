/** Reading Prometheus text exposition in tests. */

/** The value of the sample of `name` whose labels include all of `labels`; undefined when there is none. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const braces = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!braces) continue;
    const found = Object.fromEntries([...(braces[1] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(braces[2]);
  }
  return undefined;
}
