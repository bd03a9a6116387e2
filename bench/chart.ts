/** A dependency-free SVG bar chart of throughput per row, one group per comparison. */
import type { BenchReport } from "./report-types.js";

const barHeightPx = 26;
const labelWidthPx = 330;
const plotWidthPx = 420;

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function renderChartSvg(report: BenchReport): string {
  const parts: string[] = [];
  let y = 10;
  for (const c of report.comparisons) {
    const max = Math.max(1, ...c.rows.map((r) => (Number.isFinite(r.saturated.msgsPerSec) ? r.saturated.msgsPerSec : 0)));
    // A burst row's msgs/s is its drain rate (its fill rate is in the table).
    const what = c.rows.some((r) => r.burst !== undefined) ? "drain msgs/s" : "msgs/s end to end";
    parts.push(`<text x="10" y="${y + 16}" font-weight="bold">${escapeXml(c.title)} — ${what}</text>`);
    y += 28;
    for (const r of c.rows) {
      const v = Number.isFinite(r.saturated.msgsPerSec) ? r.saturated.msgsPerSec : 0;
      const w = Math.max(1, Math.round((v / max) * plotWidthPx));
      const fill = r.peer === "sluice" ? "#2f6fde" : "#b0b0b0";
      parts.push(`<text x="10" y="${y + 18}">${escapeXml(r.label)}</text>`);
      parts.push(`<rect x="${labelWidthPx}" y="${y + 4}" width="${w}" height="${barHeightPx - 8}" fill="${fill}"/>`);
      parts.push(`<text x="${labelWidthPx + w + 6}" y="${y + 18}">${Math.round(v).toLocaleString("en-US")}</text>`);
      y += barHeightPx;
    }
    y += 12;
  }
  const width = labelWidthPx + plotWidthPx + 90;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-family="sans-serif" font-size="13">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join("\n")}\n</svg>\n`;
}
