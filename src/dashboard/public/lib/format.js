// @ts-check
/** How numbers, times and durations read in the dashboard. */

const number = new Intl.NumberFormat();

/** @param {number | null | undefined} n */
export function count(n) {
  return n === null || n === undefined ? "—" : number.format(n);
}

/** @param {number | null | undefined} seconds */
export function age(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
}

/** @param {string | null | undefined} iso */
export function time(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

/** @param {unknown} value */
export function json(value) {
  return JSON.stringify(value, null, 2);
}

/**
 * Messages per second over the last `n` buckets.
 * @param {number[]} buckets
 * @param {number} bucketSeconds
 * @param {number} [n]
 */
export function rate(buckets, bucketSeconds, n = 6) {
  const recent = buckets.slice(-n);
  if (recent.length === 0) return 0;
  return recent.reduce((a, b) => a + b, 0) / (recent.length * bucketSeconds);
}

/** @param {number} perSecond */
export function perSecond(perSecond) {
  return perSecond >= 10 ? `${Math.round(perSecond)}/s` : `${perSecond.toFixed(1)}/s`;
}

/** A size in bytes, in the unit that reads best (KiB = 1024 bytes). @param {number | null | undefined} n */
export function bytes(n) {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${number.format(n)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
