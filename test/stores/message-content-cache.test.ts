/**
 * The receive-side cache of message content (message-content-cache.ts): it must never serve
 * another message's content, must stay within its budget, and a store must receive the same
 * messages with it, without it, and with one too small to hold a queue's backlog. The store
 * cases use a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { type MessageContent, MessageContentCache } from "../../src/stores/sqlite/message-content-cache.js";
import { type SqliteStore, openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { messageDelete, messageReceive, messageSend } from "../../src/stores/testkit/one-call.js";

function content(messageId: string, body: string): MessageContent {
  return {
    messageId,
    body,
    attributes: {},
    systemAttributes: {},
    bodyMd5: "md5",
    attributesMd5: undefined,
    systemAttributesMd5: undefined,
    priority: 0,
    groupId: undefined,
    deduplicationId: undefined,
    senderId: "000000000000",
  };
}

describe("MessageContentCache", () => {
  it("recalls content only for the message id it was remembered with", () => {
    const cache = new MessageContentCache(1024 * 1024);
    cache.remember(7, content("id-a", "a"), 1);
    expect(cache.recall(7, "id-a")?.body).toBe("a");
    // Seq 7 reused by another message (SQLite reuses the seq of a rolled-back insert).
    expect(cache.recall(7, "id-b")).toBeUndefined();
    expect(cache.recall(8, "id-a")).toBeUndefined();
  });

  it("forgets, and a new remember for a seq replaces the old content", () => {
    const cache = new MessageContentCache(1024 * 1024);
    cache.remember(1, content("id-1", "one"), 1);
    cache.remember(1, content("id-1b", "one again"), 1);
    expect(cache.size).toBe(1);
    expect(cache.recall(1, "id-1b")?.body).toBe("one again");
    cache.forget(1);
    cache.forget(1);
    expect(cache.size).toBe(0);
    expect(cache.recall(1, "id-1b")).toBeUndefined();
  });

  it("starts over when full, never holds more than its budget, and admits nothing it can't hold", () => {
    // An entry costs 256 bytes plus two per character: 1,000 characters ≈ 2.3 KB; five fit in
    // 12 KB, one per queue (a queue's share is a quarter of the budget).
    const cache = new MessageContentCache(12 * 1024);
    for (let seq = 1; seq <= 5; seq++) cache.remember(seq, content(`id-${seq}`, "x".repeat(1000)), seq);
    expect(cache.size).toBe(5);
    cache.remember(6, content("id-6", "x".repeat(1000)), 6);
    expect(cache.size).toBe(1);
    expect(cache.recall(6, "id-6")).toBeDefined();
    expect(cache.recall(1, "id-1")).toBeUndefined();
    cache.remember(7, content("id-7", "x".repeat(10_000)), 7);
    expect(cache.recall(7, "id-7")).toBeUndefined();
    expect(cache.size).toBe(1);
  });

  it("stops remembering a queue's messages while its share waits unreceived, and again once they go", () => {
    // 100 characters cost 456 bytes: a queue's share of 4 KB (a quarter of 16 KB) holds eight.
    const cache = new MessageContentCache(16 * 1024);
    for (let seq = 1; seq <= 10; seq++) cache.remember(seq, content(`id-${seq}`, "x".repeat(100)), 1);
    expect(cache.size).toBe(8);
    expect(cache.recall(8, "id-8")).toBeDefined();
    expect(cache.recall(9, "id-9")).toBeUndefined();
    // Another queue is not held back by the first, and nothing was cleared.
    cache.remember(11, content("id-11", "x".repeat(100)), 2);
    expect(cache.recall(11, "id-11")).toBeDefined();
    expect(cache.recall(1, "id-1")).toBeDefined();
    // Received and deleted: the queue's messages are remembered again.
    cache.forget(1);
    cache.remember(12, content("id-12", "x".repeat(100)), 1);
    expect(cache.recall(12, "id-12")).toBeDefined();
    cache.remember(13, content("id-13", "x".repeat(100)), 1);
    expect(cache.recall(13, "id-13")).toBeUndefined();
    // A clear starts every queue's share over.
    cache.clear();
    cache.remember(14, content("id-14", "x".repeat(100)), 1);
    expect(cache.recall(14, "id-14")).toBeDefined();
  });

  it("with a budget of 0 holds nothing", () => {
    const cache = new MessageContentCache(0);
    cache.remember(1, content("id-1", "one"), 1);
    expect(cache.size).toBe(0);
  });
});

describe("SQLite receives with the content cache", () => {
  const dirs: string[] = [];
  const stores: SqliteStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function open(messageCacheBytes: number): Promise<{ store: SqliteStore; queueId: number }> {
    const dir = mkdtempSync(join(tmpdir(), "sluice-cache-"));
    dirs.push(dir);
    const store = openSqliteStore({ filename: join(dir, "sluice.db"), pipelinedSync: true, messageCacheBytes });
    stores.push(store);
    const { queue } = await store.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1_000 });
    return { store, queueId: queue.id };
  }

  /** Sends `count` messages with attributes, receives them 3 at a time, deletes each batch. */
  async function cycle(messageCacheBytes: number, count: number): Promise<string[]> {
    const { store, queueId } = await open(messageCacheBytes);
    const sent = Array.from({ length: count }, (_, i) =>
      newMessage({ body: `body ${i} ${"y".repeat(500)}`, attributes: { n: { dataType: "Number", stringValue: String(i) } }, attributesMd5: `md5-${i}`, sentAtMs: 1_000, visibleAtMs: 1_000 }),
    );
    await messageSend(store, { queueId, messages: sent });
    const seen: string[] = [];
    for (let round = 0; round < count; round++) {
      const { messages } = await messageReceive(store, { queueId, max: 3, nowMs: 2_000, visibleUntilMs: 60_000, minSentAtMs: 0, receiptToken: `tok-${round}` });
      if (messages.length === 0) break;
      for (const m of messages) {
        const original = sent.find((s) => s.messageId === m.messageId)!;
        expect(m.body).toBe(original.body);
        expect(m.attributes).toEqual(original.attributes);
        expect(m.attributesMd5).toBe(original.attributesMd5);
        expect(m.receiveCount).toBe(1);
        expect(m.receiptToken).toBe(`tok-${round}`);
        seen.push(m.messageId);
      }
      const { deleted } = await messageDelete(store, { queueId, receipts: messages.map((m) => ({ seq: m.seq, token: m.receiptToken! })) });
      expect(deleted.every(Boolean)).toBe(true);
    }
    return seen;
  }

  it("receives every message once, in order, with the cache, without it, and with one the backlog outgrows", async () => {
    const withCache = await cycle(32 * 1024 * 1024, 20);
    expect(withCache).toHaveLength(20);
    expect(await cycle(0, 20)).toHaveLength(20);
    // A queue's share of 16 KiB holds three of these messages: the rest are read from the row.
    expect(await cycle(16 * 1024, 20)).toHaveLength(20);
    const ids = new Set(withCache);
    expect(ids.size).toBe(20);
  });

  it("takes the content from the cache when it holds it, and from the row when it doesn't", async () => {
    // White-box: the row's body is changed behind the store's back (nothing in Sluice does this;
    // bodies never change), so the body a receive returns shows where it was read from.
    for (const [bytes, expected] of [
      [32 * 1024 * 1024, "original"],
      [0, "changed in the row"],
    ] as const) {
      const { store, queueId } = await open(bytes);
      await messageSend(store, { queueId, messages: [newMessage({ body: "original", sentAtMs: 1_000, visibleAtMs: 1_000 })] });
      store.db.prepare("UPDATE messages SET body = 'changed in the row'").run();
      const { messages } = await messageReceive(store, { queueId, max: 10, nowMs: 2_000, visibleUntilMs: 60_000, minSentAtMs: 0, receiptToken: "tok" });
      expect(messages.map((m) => m.body)).toEqual([expected]);
    }
  });

  it("a hit is the very message a read of its row gives, and the caller's to change", async () => {
    const sent = newMessage({
      body: "with attributes",
      attributes: { s: { dataType: "String", stringValue: "v" }, n: { dataType: "Number.int", stringValue: "5" }, b: { dataType: "Binary", binaryValue: new Uint8Array([1, 2, 3]) } },
      systemAttributes: { AWSTraceHeader: { dataType: "String", stringValue: "Root=1-abc" } },
      attributesMd5: "md5-a",
      systemAttributesMd5: "md5-s",
      sentAtMs: 1_000,
      visibleAtMs: 1_000,
    });
    const receiveWith = async (bytes: number) => {
      const { store, queueId } = await open(bytes);
      await messageSend(store, { queueId, messages: [sent] });
      return (await messageReceive(store, { queueId, max: 10, nowMs: 2_000, visibleUntilMs: 60_000, minSentAtMs: 0, receiptToken: "tok" })).messages[0]!;
    };
    const fromCache = await receiveWith(32 * 1024 * 1024);
    const fromRow = await receiveWith(0);
    expect(fromCache).toStrictEqual(fromRow);
    expect(Object.keys(fromCache)).toEqual(Object.keys(fromRow));
    // Not the cached objects: changing them changes no other receive of the message (nor the sender's).
    expect(fromCache.attributes).not.toBe(sent.attributes);
    expect(fromCache.attributes.b!.binaryValue).not.toBe(sent.attributes.b!.binaryValue);
  });

  it("a hit keeps what the send knew of its body (bodyPlain); a read of the row does not", async () => {
    const receiveWith = async (bytes: number, bodyPlain: boolean | undefined) => {
      const { store, queueId } = await open(bytes);
      await messageSend(store, { queueId, messages: [newMessage({ body: "plain body", sentAtMs: 1_000, visibleAtMs: 1_000, bodyPlain })] });
      return (await messageReceive(store, { queueId, max: 10, nowMs: 2_000, visibleUntilMs: 60_000, minSentAtMs: 0, receiptToken: "tok" })).messages[0]!;
    };
    expect((await receiveWith(32 * 1024 * 1024, true)).bodyPlain).toBe(true);
    expect("bodyPlain" in (await receiveWith(32 * 1024 * 1024, undefined))).toBe(false);
    expect("bodyPlain" in (await receiveWith(0, true))).toBe(false);
  });

  it("serves FIFO receives from the cache too", async () => {
    const { store, queueId } = await open(32 * 1024 * 1024);
    await messageSend(store, { queueId, messages: [newMessage({ body: "original", groupId: "g", sentAtMs: 1_000, visibleAtMs: 1_000 })] });
    store.db.prepare("UPDATE messages SET body = 'changed in the row'").run();
    const { messages } = await messageReceive(store, { queueId, max: 10, nowMs: 2_000, visibleUntilMs: 60_000, minSentAtMs: 0, receiptToken: "tok", fifo: true });
    expect(messages.map((m) => [m.body, m.groupId])).toEqual([["original", "g"]]);
  });

  it("serves a redriven message with the sent time of its move and its original content", async () => {
    const { store, queueId } = await open(32 * 1024 * 1024);
    const { queue: dest } = await store.queueCreate({ name: "dest", config: defaultQueueConfig(false), tags: {}, nowMs: 1_000 });
    const [m] = await messageSend(store, { queueId, messages: [newMessage({ body: "moved", sentAtMs: 1_000, visibleAtMs: 1_000 })] });
    expect((await store.messageMove({ sourceQueueId: queueId, destinationQueueId: dest.id, max: 10, nowMs: 5_000, minSentAtMs: 0 })).moved).toBe(1);
    const { messages } = await messageReceive(store, { queueId: dest.id, max: 10, nowMs: 5_000, visibleUntilMs: 60_000, minSentAtMs: 0, receiptToken: "tok" });
    expect(messages.map((x) => [x.messageId, x.body, x.sentAtMs])).toEqual([[m!.messageId, "moved", 5_000]]);
  });
});
