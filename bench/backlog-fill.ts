/**
 * Fills one queue of a store with `n` messages straight through the store (no HTTP), for the
 * benches that measure a server in front of a deep backlog. The store may be another revision's.
 */
export interface FillStore {
  queueCreate(p: { name: string; config: unknown; tags: Record<string, string>; nowMs: number }): Promise<{ queue: { id: number } }>;
  /** Revisions before the `*Many` calls have messageSend. */
  messageSend?(p: { queueId: number; messages: unknown[] }): Promise<unknown>;
  messageSendMany?(p: { sends: Array<{ queueId: number; messages: unknown[] }> }): Promise<unknown>;
}

/** Sends `n` copies of `body` to a new queue `name`, `perSend` per write; answers the queue's id. */
export async function fillQueue(store: FillStore, p: { name: string; config: unknown; n: number; body: string; perSend: number; nowMs: number; log: (line: string) => void }): Promise<number> {
  const { queue } = await store.queueCreate({ name: p.name, config: p.config, tags: {}, nowMs: p.nowMs });
  for (let sent = 0; sent < p.n; sent += p.perSend) {
    const batch = Array.from({ length: Math.min(p.perSend, p.n - sent) }, (_, i) => ({
      messageId: `m-${sent + i}`,
      body: p.body,
      attributes: {},
      systemAttributes: {},
      bodyMd5: "00000000000000000000000000000000",
      sentAtMs: p.nowMs,
      visibleAtMs: p.nowMs,
      priority: 0,
      senderId: "bench",
    }));
    const send = { queueId: queue.id, messages: batch };
    await (store.messageSendMany ? store.messageSendMany({ sends: [send] }) : store.messageSend!(send));
    if ((sent / p.perSend) % 100 === 0) p.log(`filled ${sent} of ${p.n}`);
  }
  return queue.id;
}
