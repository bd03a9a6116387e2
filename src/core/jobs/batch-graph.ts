/**
 * A batch submit's small DAG: an entry's dependsOn may name jobs by id, or other entries of the
 * same batch by index (`{"entry": 0}`). Entries are submitted parents first; a reference to no
 * entry, to itself, or one that closes a cycle refuses the whole batch, naming the cycle.
 */
import { fail } from "../errors.js";

export type BatchDependency = string | { entry: number };

/** Entry indexes in an order where every entry comes after the entries it depends on (stable otherwise). */
export function batchSubmitOrder(dependsOn: ReadonlyArray<readonly BatchDependency[] | undefined>): number[] {
  const n = dependsOn.length;
  const parentsOf: number[][] = dependsOn.map((deps, i) => {
    const refs: number[] = [];
    for (const d of deps ?? []) {
      if (typeof d === "string") continue;
      const k = d.entry;
      if (!Number.isInteger(k) || k < 0 || k >= n) fail("ValidationFailed", `jobs[${i}].dependsOn refers to entry ${k}, but the batch has entries 0–${n - 1}.`);
      if (k === i) fail("ValidationFailed", `jobs[${i}].dependsOn refers to itself.`);
      if (refs.includes(k)) fail("ValidationFailed", `jobs[${i}].dependsOn refers to entry ${k} twice.`);
      refs.push(k);
    }
    return refs;
  });
  // Depth-first, parents before children; a node met again while on the path closes a cycle.
  const state = new Uint8Array(n); // 0 unvisited, 1 on the path, 2 placed
  const order: number[] = [];
  const path: number[] = [];
  const visit = (i: number): void => {
    if (state[i] === 2) return;
    if (state[i] === 1) {
      const cycle = [...path.slice(path.indexOf(i)), i];
      fail("ValidationFailed", `dependsOn makes a cycle between batch entries: ${cycle.join(" → ")} (each depends on the next).`);
    }
    state[i] = 1;
    path.push(i);
    for (const parent of parentsOf[i]!) visit(parent);
    path.pop();
    state[i] = 2;
    order.push(i);
  };
  for (let i = 0; i < n; i++) visit(i);
  return order;
}
