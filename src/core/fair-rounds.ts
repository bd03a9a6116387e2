/**
 * Fair sharing's order (docs/fair-queues.md), for a receive on a queue with message groups and a
 * job lease between tenants: rounds over the flows, least served first, one start per flow per
 * round, until enough started or a round started none. A store reads and writes; this decides
 * which flow is served next and counts what each was served (to add to its `served` after).
 */

/** The ungrouped messages of a queue that has groups are one more flow, named ''. */
export const ungroupedFlow = "";

export class FairRounds {
  /** Starts per flow, in the order the flows were first served. */
  readonly servedBy = new Map<string, number>();
  private started = 0;
  private startedThisRound = 0;
  private round: Iterator<string> | undefined;

  /**
   * `flows` is asked again at the start of each round, and may be read lazily (a page at a time,
   * with writes between pages): served counts change only after the rounds, so the order holds.
   */
  constructor(
    private readonly wanted: number,
    private readonly flows: () => Iterable<string>,
  ) {}

  /** The flow to serve next, or undefined when enough started or a whole round started none. */
  next(): string | undefined {
    for (;;) {
      if (this.started >= this.wanted) return undefined;
      if (this.round === undefined) {
        this.round = this.flows()[Symbol.iterator]();
        this.startedThisRound = 0;
      }
      const step = this.round.next();
      if (step.done !== true) return step.value;
      this.round = undefined;
      if (this.startedThisRound === 0) return undefined;
    }
  }

  /** The flow `next` last answered started one (a flow passed by, or with nothing ready, says nothing). */
  served(flow: string): void {
    this.servedBy.set(flow, (this.servedBy.get(flow) ?? 0) + 1);
    this.started++;
    this.startedThisRound++;
  }
}

/**
 * What rounds over candidates already read would start, if every candidate started: one per flow
 * per round, in the flows' order, at most `wanted`. For a store that reads each flow's first few
 * ready rows at once and writes the chosen ones in one statement.
 */
export function roundRobin<T>(perFlow: readonly (readonly T[])[], wanted: number): T[] {
  const chosen: T[] = [];
  for (let round = 0; chosen.length < wanted; round++) {
    const before = chosen.length;
    for (const list of perFlow) if (round < list.length && chosen.length < wanted) chosen.push(list[round]!);
    if (chosen.length === before) break;
  }
  return chosen;
}
