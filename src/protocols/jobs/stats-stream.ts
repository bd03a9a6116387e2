/**
 * Server-Sent Events of queue stats (the dashboard's live tables and progress bars): a snapshot at
 * once, then one every interval on the injected clock — the next one timed from when the last was
 * written, so a slow read never piles snapshots up. Shutdown and the client leaving end it.
 */
import type { ServerResponse } from "node:http";
import type { Clock, TimerHandle } from "../../core/index.js";

/** A snapshot to send, or the last one (`end`: the stream closes after it). */
export interface StatsEvent {
  event: string;
  json: string;
  end?: boolean;
}

export interface StatsStreamDeps {
  clock: Clock;
  shutdownSignal: AbortSignal;
  onUnexpectedError: (err: unknown) => void;
}

/** A client this far behind is cut off: every snapshot replaces the last, so it may as well reconnect. */
const maxBufferedBytes = 1024 * 1024;

export function streamStats(deps: StatsStreamDeps, res: ServerResponse, intervalMs: number, snapshot: () => Promise<StatsEvent>): void {
  let ended = false;
  let timer: TimerHandle | undefined;
  const end = (): void => {
    if (ended) return;
    ended = true;
    timer?.cancel();
    deps.shutdownSignal.removeEventListener("abort", end);
    res.end();
  };
  res.on("close", end);
  deps.shutdownSignal.addEventListener("abort", end, { once: true });
  if (deps.shutdownSignal.aborted) return end();

  const tick = async (): Promise<void> => {
    timer = undefined;
    let next: StatsEvent;
    try {
      next = await snapshot();
    } catch (err) {
      deps.onUnexpectedError(err);
      return end();
    }
    if (ended) return;
    res.write(`event: ${next.event}\ndata: ${next.json}\n\n`);
    if (next.end) return end();
    if (res.writableLength > maxBufferedBytes) {
      end();
      res.destroy();
      return;
    }
    timer = deps.clock.setTimer(intervalMs, () => void tick());
  };
  void tick();
}
