/**
 * The per-file harness for SDK scenario suites: one in-process server on a ManualClock (so
 * visibility and delays move only when a test advances time), a driver for the SDK under test,
 * and small helpers that read the server the way a client would.
 */
import { afterAll, beforeAll, expect } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import type { ActionMap, SqsDriver } from "./drivers.js";

export const accountId = "000000000000";

export interface Harness {
  server: TestServer;
  clock: ManualClock;
  driver: SqsDriver;
  /** A fresh, unique queue name for this file (queues never collide between tests). */
  uniqueName(stem?: string): string;
  /** Creates a queue and returns its URL, asserting the URL's shape. */
  createQueue(attributes?: Record<string, string>, tags?: Record<string, string>, name?: string): Promise<string>;
  attributes(queueUrl: string, names?: string[]): Promise<Record<string, string>>;
  counts(queueUrl: string): Promise<{ visible: number; notVisible: number; delayed: number }>;
  send(queueUrl: string, body: string, extra?: Partial<ActionMap["SendMessage"][0]>): Promise<ActionMap["SendMessage"][1]>;
  receive(queueUrl: string, extra?: Partial<ActionMap["ReceiveMessage"][0]>): Promise<NonNullable<ActionMap["ReceiveMessage"][1]["Messages"]>>;
}

/** Registers beforeAll/afterAll; the returned object is filled in once the server is up. */
export function useHarness(makeDriver: (server: TestServer) => SqsDriver): Harness {
  let counter = 0;
  const stemPrefix = `t${process.pid}`;
  const h = {
    uniqueName(stem = "q") {
      counter += 1;
      return `${stemPrefix}-${stem}-${counter}`;
    },
    async createQueue(attributes?: Record<string, string>, tags?: Record<string, string>, name?: string) {
      const queueName = name ?? h.uniqueName();
      const res = await h.driver.call("CreateQueue", { QueueName: queueName, Attributes: attributes, tags });
      expect(res.QueueUrl).toBe(`${h.server.url}/${accountId}/${queueName}`);
      return res.QueueUrl!;
    },
    async attributes(queueUrl: string, names: string[] = ["All"]) {
      const res = await h.driver.call("GetQueueAttributes", { QueueUrl: queueUrl, AttributeNames: names as never });
      return (res.Attributes ?? {}) as Record<string, string>;
    },
    async counts(queueUrl: string) {
      const a = await h.attributes(queueUrl, [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ]);
      return {
        visible: Number(a.ApproximateNumberOfMessages),
        notVisible: Number(a.ApproximateNumberOfMessagesNotVisible),
        delayed: Number(a.ApproximateNumberOfMessagesDelayed),
      };
    },
    async send(queueUrl: string, body: string, extra: Partial<ActionMap["SendMessage"][0]> = {}) {
      return h.driver.call("SendMessage", { QueueUrl: queueUrl, MessageBody: body, ...extra });
    },
    async receive(queueUrl: string, extra: Partial<ActionMap["ReceiveMessage"][0]> = {}) {
      const res = await h.driver.call("ReceiveMessage", { QueueUrl: queueUrl, ...extra });
      return res.Messages ?? [];
    },
  } as Harness;

  beforeAll(async () => {
    h.clock = new ManualClock();
    h.server = await startTestServer({ clock: h.clock });
    h.driver = makeDriver(h.server);
  });
  afterAll(async () => {
    h.driver?.destroy();
    await stopAllServers();
    await removeTempDirs();
  });
  return h;
}
