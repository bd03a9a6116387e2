/**
 * Epoch milliseconds → ISO-8601 UTC text (`2026-11-22T05:45:41.513Z`), exactly as
 * Date#toISOString for years 1000–9999, without a Date per call: every job answer formats about six
 * timestamps, and almost all of them fall on the same day, so the date part is computed once per day.
 */
const dayMs = 86_400_000;
let cachedDay = NaN;
let cachedPrefix = "";

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

export function isoTime(ms: number): string {
  const day = Math.floor(ms / dayMs);
  // Outside 4-digit years (or not an integer) the general path keeps toISOString's exact output.
  if (!Number.isInteger(ms) || ms < -30_610_224_000_000 || ms >= 253_402_300_800_000) return new Date(ms).toISOString();
  if (day !== cachedDay) {
    cachedDay = day;
    cachedPrefix = new Date(day * dayMs).toISOString().slice(0, 11); // "YYYY-MM-DDT"
  }
  let rest = ms - day * dayMs;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${cachedPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(millis)}Z`;
}
