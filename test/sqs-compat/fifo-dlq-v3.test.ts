/**
 * FIFO queues, dead-letter queues, message move tasks and permissions through
 * @aws-sdk/client-sqs v3 (JSON 1.0), on an in-process server with a ManualClock.
 */
import * as sqs from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { sqsV3 } from "../support/clients.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { type LooseDriver, fifoDlqScenarios } from "./fifo-dlq-scenarios.js";

type CommandClass = new (input: unknown) => Parameters<sqs.SQSClient["send"]>[0];

function v3LooseDriver(server: TestServer): LooseDriver {
  const client = sqsV3(server.url);
  return {
    async call(action, input) {
      const Command = (sqs as unknown as Record<string, CommandClass>)[`${action}Command`];
      if (!Command) throw new Error(`no v3 command for ${action}`);
      return client.send(new Command(input));
    },
    errorCodeOf: (error) => (error as { name?: string }).name,
    expectedCodeOf: (expected) => expected.shape,
    systemAttributesParam: "MessageSystemAttributeNames",
    destroy: () => client.destroy(),
  };
}

let clock: ManualClock;
let server: TestServer;
let driver: LooseDriver;
beforeAll(async () => {
  clock = new ManualClock();
  server = await startTestServer({ clock });
  driver = v3LooseDriver(server);
});
afterAll(async () => {
  driver.destroy();
  await stopAllServers();
  await removeTempDirs();
});

describe("FIFO, DLQ and move tasks: SDK v3, JSON protocol", () => {
  fifoDlqScenarios({ server: () => server, clock: () => clock, driver: () => driver, driverFor: v3LooseDriver });
});
