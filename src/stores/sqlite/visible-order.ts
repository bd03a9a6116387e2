/**
 * A queue's messages in visibility order come from three indexes (migrations 048, 053): of the
 * ungrouped messages of priority 0 — most messages — those that require nothing from
 * messages_ready_ungrouped's priority-0 range and those that require something from
 * messages_ready_classed's, each listing them by visible_at_ms then seq already; every other
 * message from messages_visible_other. So a queued message pays for one index entry there, not
 * two. Each part is written with its index's WHERE, so SQLite can use it; the parts never overlap.
 */
export interface VisiblePart {
  /** `messages INDEXED BY …`, for a FROM. */
  from: string;
  /** The part's condition, to AND into a WHERE. */
  where: string;
}

export const visibleParts: readonly VisiblePart[] = [
  { from: "messages INDEXED BY messages_ready_ungrouped", where: "group_id IS NULL AND req_class IS NULL AND priority = 0" },
  { from: "messages INDEXED BY messages_ready_classed", where: "group_id IS NULL AND req_class IS NOT NULL AND priority = 0" },
  { from: "messages INDEXED BY messages_visible_other", where: "(group_id IS NOT NULL OR priority <> 0)" },
];

/** A statement's positional parameters repeated once per visibility part (each part binds its own). */
export function perPart<T>(...values: T[]): T[] {
  return visibleParts.flatMap(() => values);
}

/** Rows of every part, each list in visibility order, merged into one: the first `limit` of them. */
export function mergeVisible<R extends { visible_at_ms: number; seq: number }>(lists: readonly (readonly R[])[], limit: number): R[] {
  const out: R[] = [];
  const at = lists.map(() => 0);
  while (out.length < limit) {
    let best = -1;
    for (let k = 0; k < lists.length; k++) {
      const row = lists[k]![at[k]!];
      if (row === undefined) continue;
      const first = best < 0 ? undefined : lists[best]![at[best]!]!;
      if (first === undefined || row.visible_at_ms < first.visible_at_ms || (row.visible_at_ms === first.visible_at_ms && row.seq < first.seq)) best = k;
    }
    if (best < 0) break;
    out.push(lists[best]![at[best]!++]!);
  }
  return out;
}

/** A limit of -1 (none) as a count for mergeVisible. */
export function mergeLimit(limit: number): number {
  return limit < 0 ? Number.POSITIVE_INFINITY : limit;
}
