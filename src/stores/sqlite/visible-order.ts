/**
 * A queue's messages in visibility order come from two indexes (migration 048): ungrouped
 * messages of priority 0 that require nothing — most messages — from messages_ready_ungrouped's
 * priority-0 range, which lists them by visible_at_ms then seq already; every other message from
 * messages_visible_other. So a queued message pays for one index entry there, not two. Each part
 * is written with its index's WHERE, so SQLite can use it; the parts never overlap.
 */
export interface VisiblePart {
  /** `messages INDEXED BY …`, for a FROM. */
  from: string;
  /** The part's condition, to AND into a WHERE. */
  where: string;
}

export const visibleParts: readonly [VisiblePart, VisiblePart] = [
  { from: "messages INDEXED BY messages_ready_ungrouped", where: "group_id IS NULL AND req_class IS NULL AND priority = 0" },
  { from: "messages INDEXED BY messages_visible_other", where: "(group_id IS NOT NULL OR req_class IS NOT NULL OR priority <> 0)" },
];

/** Rows of both parts, each in visibility order, merged into one: the first `limit` of them. */
export function mergeVisible<R extends { visible_at_ms: number; seq: number }>(a: readonly R[], b: readonly R[], limit: number): R[] {
  const out: R[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    const takeA = j === b.length || (i < a.length && (a[i]!.visible_at_ms < b[j]!.visible_at_ms || (a[i]!.visible_at_ms === b[j]!.visible_at_ms && a[i]!.seq < b[j]!.seq)));
    out.push(takeA ? a[i++]! : b[j++]!);
  }
  return out;
}

/** A limit of -1 (none) as a count for mergeVisible. */
export function mergeLimit(limit: number): number {
  return limit < 0 ? Number.POSITIVE_INFINITY : limit;
}
