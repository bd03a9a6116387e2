/**
 * One send, receive or delete through the store's `*Many` calls, as core makes them for a store
 * that gathers nothing: most cases of the suite make one call at a time.
 */
import type { DeleteResult, MessageDeleteCall, MessageReceiveParams, MessageSendCall, ReceiveResult, SentMessage, Store } from "../../core/store.js";

/** The send's messages; a send into a deleted queue ("queueGone") throws. */
export async function messageSend(store: Store, p: MessageSendCall): Promise<SentMessage[]> {
  const [outcome] = await store.messageSendMany({ sends: [p] });
  if (outcome === "queueGone") throw new Error(`messageSend: queue ${p.queueId} is gone`);
  return outcome!;
}

export async function messageReceive(store: Store, p: MessageReceiveParams): Promise<ReceiveResult> {
  return (await store.messageReceiveMany({ receives: [p] }))[0]!;
}

export async function messageDelete(store: Store, p: MessageDeleteCall): Promise<DeleteResult> {
  return (await store.messageDeleteMany({ deletes: [p] }))[0]!;
}
