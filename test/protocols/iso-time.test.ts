/** The jobs API's ISO timestamps match Date#toISOString exactly. */
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/protocols/jobs/iso-time.js";

describe("isoTime", () => {
  it("equals toISOString across days, edges and odd values", () => {
    const samples = [0, 1, 999, 1_000, 59_999, 86_399_999, 86_400_000, 1_700_000_000_000, 1_795_000_000_123, -1, -86_400_001, 253_402_300_799_999, 253_402_300_800_000, -30_610_224_000_000, -30_610_224_000_001, 1.5];
    let x = 1_763_000_000_000;
    for (let i = 0; i < 2_000; i++) samples.push((x = (x * 48_271 + 12_345) % 4_000_000_000_000));
    for (const ms of samples) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});
