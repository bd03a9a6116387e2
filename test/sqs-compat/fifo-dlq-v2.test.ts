/**
 * FIFO queues, dead-letter queues, message move tasks and permissions through aws-sdk v2
 * 2.1490.0 (query/XML), on an in-process server with a ManualClock.
 */
import type AWS from "aws-sdk";
import { afterAll, beforeAll, describe } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { destroyV2, sqsV2 } from "../support/clients.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { type LooseDriver, fifoDlqScenarios } from "./fifo-dlq-scenarios.js";

type V2Method = (this: AWS.SQS, params: unknown) => AWS.Request<unknown, AWS.AWSError>;

function v2LooseDriver(server: TestServer): LooseDriver {
  const client = sqsV2(server.url);
  return {
    async call(action, input) {
      const method = (client as unknown as Record<string, V2Method>)[action.charAt(0).toLowerCase() + action.slice(1)];
      if (!method) throw new Error(`no v2 method for ${action}`);
      return method.call(client, input).promise();
    },
    errorCodeOf: (error) => (error as { code?: string }).code,
    expectedCodeOf: (expected) => expected.code,
    // 2.1490.0 predates MessageSystemAttributeNames.
    systemAttributesParam: "AttributeNames",
    destroy: () => destroyV2(client),
  };
}

let clock: ManualClock;
let server: TestServer;
let driver: LooseDriver;
beforeAll(async () => {
  clock = new ManualClock();
  server = await startTestServer({ clock });
  driver = v2LooseDriver(server);
});
afterAll(async () => {
  driver.destroy();
  await stopAllServers();
  await removeTempDirs();
});

describe("FIFO, DLQ and move tasks: SDK v2 2.1490.0, query protocol", () => {
  fifoDlqScenarios({ server: () => server, clock: () => clock, driver: () => driver, driverFor: v2LooseDriver });
});
