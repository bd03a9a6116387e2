/**
 * One account's share of the exposition text: the series labelled with its account (every
 * per-queue metric carries `account`), with their HELP and TYPE lines. What another account's
 * token gets from /metrics — its own queues' numbers, and nothing of the server's or of other
 * accounts' (process, requests and store metrics describe the whole server).
 */

/** Whether a series line (`name{labels} value`) has the label `account="<accountId>"`. */
function hasAccount(line: string, label: string): boolean {
  const open = line.indexOf("{");
  if (open < 0) return false;
  const at = line.indexOf(label, open);
  return at > open && (line[at - 1] === "{" || line[at - 1] === ",");
}

export function seriesOfAccount(text: string, accountId: string): string {
  const label = `account="${accountId}"`;
  const out: string[] = [];
  let meta: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("# HELP ")) meta = [line];
    else if (line.startsWith("#")) meta.push(line);
    else if (line !== "" && hasAccount(line, label)) {
      // A metric's HELP and TYPE once, before its first series that is kept.
      out.push(...meta, line);
      meta = [];
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}
