/**
 * How the admin commands print: JSON (one document on stdout) with --json or when stdout is not
 * a terminal, so scripts and pipes get something to parse; a human layout on a terminal.
 */
import Table from "cli-table3";

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

/** Rows under a header, as a terminal table (cli-table3). */
export function printTable(head: string[], rows: Array<Array<string | number>>): void {
  const table = new Table({ head, style: { head: ["bold"], border: [] } });
  table.push(...rows.map((r) => r.map((c) => String(c))));
  console.log(table.toString());
}

/** A record as a two-column table: nested objects flattened to dotted keys. */
export function printRecord(record: Record<string, unknown>): void {
  const rows: Array<[string, string]> = [];
  const walk = (prefix: string, value: unknown): void => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
    } else {
      rows.push([prefix, value === null || value === undefined ? "—" : Array.isArray(value) ? value.join(" ") : String(value)]);
    }
  };
  walk("", record);
  printTable(["field", "value"], rows);
}
