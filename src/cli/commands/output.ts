/**
 * How the admin commands print: JSON (one document on stdout) with --json or when stdout is not
 * a terminal, so scripts and pipes get something to parse; a human layout on a terminal.
 */
export interface OutputFlags {
  json?: boolean;
}

export function wantsJson(flags: OutputFlags, stdout: NodeJS.WriteStream = process.stdout): boolean {
  return flags.json === true || stdout.isTTY !== true;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
