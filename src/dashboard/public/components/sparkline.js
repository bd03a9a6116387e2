// @ts-check
/** A throughput sparkline: completed messages per bucket (a line) over sent ones (a faint area), as SVG. */
import { html } from "htm/preact";
import { perSecond, rate } from "../lib/format.js";

/**
 * @param {{ throughput: { bucketSeconds: number, sent: number[], completed: number[] }, width?: number, height?: number }} props
 */
export function Sparkline({ throughput, width = 120, height = 28 }) {
  const { sent, completed, bucketSeconds } = throughput;
  const max = Math.max(1, ...sent, ...completed);
  const step = sent.length > 1 ? width / (sent.length - 1) : width;
  /** @param {number[]} values */
  const points = (values) => values.map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - (v / max) * (height - 2)).toFixed(1)}`).join(" ");
  const minutes = Math.round((sent.length * bucketSeconds) / 60);
  const label = `Last ${minutes} min: ${perSecond(rate(completed, bucketSeconds))} completed, ${perSecond(rate(sent, bucketSeconds))} sent (last 30 s)`;
  return html`<svg class="sparkline" role="img" aria-label=${label} width=${width} height=${height} viewBox="0 0 ${width} ${height}" preserveAspectRatio="none">
    <title>${label}</title>
    <polygon class="sparkline-sent" points="0,${height} ${points(sent)} ${width},${height}" />
    <polyline class="sparkline-completed" points=${points(completed)} />
  </svg>`;
}
