/**
 * One scenario suite, two real SDKs: each driver sends an action through its SDK and knows how
 * that SDK surfaces an SQS error. The v3 SDK (JSON 1.0) and v2 SDK 2.1490.0 (query/XML) take the
 * same PascalCase request shapes, so a scenario is written once.
 */
import {
  AddPermissionCommand,
  type AddPermissionCommandInput,
  ChangeMessageVisibilityBatchCommand,
  type ChangeMessageVisibilityBatchCommandInput,
  type ChangeMessageVisibilityBatchResult,
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityCommandInput,
  CreateQueueCommand,
  type CreateQueueCommandInput,
  type CreateQueueResult,
  DeleteMessageBatchCommand,
  type DeleteMessageBatchCommandInput,
  type DeleteMessageBatchResult,
  DeleteMessageCommand,
  type DeleteMessageCommandInput,
  DeleteQueueCommand,
  type DeleteQueueCommandInput,
  GetQueueAttributesCommand,
  type GetQueueAttributesCommandInput,
  type GetQueueAttributesResult,
  GetQueueUrlCommand,
  type GetQueueUrlCommandInput,
  ListDeadLetterSourceQueuesCommand,
  type ListDeadLetterSourceQueuesCommandInput,
  type ListDeadLetterSourceQueuesResult,
  type GetQueueUrlResult,
  ListQueueTagsCommand,
  type ListQueueTagsCommandInput,
  type ListQueueTagsResult,
  ListQueuesCommand,
  type ListQueuesCommandInput,
  type ListQueuesResult,
  PurgeQueueCommand,
  type PurgeQueueCommandInput,
  RemovePermissionCommand,
  type RemovePermissionCommandInput,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  type ReceiveMessageResult,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  type SendMessageBatchResult,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SendMessageResult,
  SetQueueAttributesCommand,
  type SetQueueAttributesCommandInput,
  type SQSClient,
  TagQueueCommand,
  type TagQueueCommandInput,
  UntagQueueCommand,
  type UntagQueueCommandInput,
} from "@aws-sdk/client-sqs";
import type AWS from "aws-sdk";
import { expect } from "vitest";
import { destroyV2 } from "../support/clients.js";

type Empty = Record<string, never>;

/** Request and result shapes per action (the v3 model's; v2 uses the same member names). */
export interface ActionMap {
  CreateQueue: [CreateQueueCommandInput, CreateQueueResult];
  GetQueueUrl: [GetQueueUrlCommandInput, GetQueueUrlResult];
  ListQueues: [ListQueuesCommandInput, ListQueuesResult];
  DeleteQueue: [DeleteQueueCommandInput, Empty];
  GetQueueAttributes: [GetQueueAttributesCommandInput, GetQueueAttributesResult];
  SetQueueAttributes: [SetQueueAttributesCommandInput, Empty];
  PurgeQueue: [PurgeQueueCommandInput, Empty];
  SendMessage: [SendMessageCommandInput, SendMessageResult];
  SendMessageBatch: [SendMessageBatchCommandInput, SendMessageBatchResult];
  ReceiveMessage: [ReceiveMessageCommandInput, ReceiveMessageResult];
  DeleteMessage: [DeleteMessageCommandInput, Empty];
  DeleteMessageBatch: [DeleteMessageBatchCommandInput, DeleteMessageBatchResult];
  ChangeMessageVisibility: [ChangeMessageVisibilityCommandInput, Empty];
  ChangeMessageVisibilityBatch: [ChangeMessageVisibilityBatchCommandInput, ChangeMessageVisibilityBatchResult];
  TagQueue: [TagQueueCommandInput, Empty];
  UntagQueue: [UntagQueueCommandInput, Empty];
  ListQueueTags: [ListQueueTagsCommandInput, ListQueueTagsResult];
  ListDeadLetterSourceQueues: [ListDeadLetterSourceQueuesCommandInput, ListDeadLetterSourceQueuesResult];
  AddPermission: [AddPermissionCommandInput, Empty];
  RemovePermission: [RemovePermissionCommandInput, Empty];
}

export type ActionName = keyof ActionMap;

/** An SQS error as the service model defines it: shape name, query code, HTTP status. */
export interface ExpectedError {
  shape: string;
  code: string;
  status: number;
  /** The message, when it is pinned: one text, or the JSON and the query protocol's own. */
  message?: string | { json: string; query: string };
}

/** The same error, with its message pinned. */
export function withMessage(expected: ExpectedError, message: NonNullable<ExpectedError["message"]>): ExpectedError {
  return { ...expected, message };
}

/** The message this driver's protocol should carry, if the error pins one. */
export function expectedMessage(expected: ExpectedError, protocol: "json" | "query"): string | undefined {
  const m = expected.message;
  return m === undefined || typeof m === "string" ? m : m[protocol];
}

function err(shape: string, code: string = shape, status = 400): ExpectedError {
  return { shape, code, status };
}

/** Shapes and query codes from the SQS Smithy model (as @aws-sdk/client-sqs 3.1169.0 ships it). */
export const sqsErrors = {
  QueueDoesNotExist: err("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"),
  QueueNameExists: err("QueueNameExists", "QueueAlreadyExists"),
  QueueDeletedRecently: err("QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently"),
  ReceiptHandleIsInvalid: err("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404),
  MessageNotInflight: err("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight"),
  PurgeQueueInProgress: err("PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress", 403),
  TooManyEntriesInBatchRequest: err("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
  BatchEntryIdsNotDistinct: err("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
  EmptyBatchRequest: err("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest"),
  BatchRequestTooLong: err("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong"),
  InvalidBatchEntryId: err("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId"),
  InvalidAttributeName: err("InvalidAttributeName"),
  InvalidAttributeValue: err("InvalidAttributeValue"),
  InvalidMessageContents: err("InvalidMessageContents"),
  /** Not modeled shapes: generic errors the SDKs surface by their code. */
  InvalidParameterValue: err("InvalidParameterValue"),
  MissingParameter: err("MissingParameter"),
} satisfies Record<string, ExpectedError>;

export interface SqsDriver {
  readonly label: string;
  readonly protocol: "json" | "query";
  /** Whether this SDK's model knows ReceiveMessage's MessageSystemAttributeNames (v2 2.1490 predates it). */
  readonly hasMessageSystemAttributeNames: boolean;
  call<A extends ActionName>(action: A, input: ActionMap[A][0]): Promise<ActionMap[A][1]>;
  /** Asserts that `error` is `expected` exactly as this SDK surfaces it. */
  assertError(error: unknown, expected: ExpectedError): void;
  /** Releases the SDK's sockets. */
  destroy(): void;
}

/** Runs the call and asserts it fails with `expected`. */
export async function expectSqsError<A extends ActionName>(
  driver: SqsDriver,
  action: A,
  input: ActionMap[A][0],
  expected: ExpectedError,
): Promise<void> {
  let caught: unknown;
  try {
    await driver.call(action, input);
  } catch (e) {
    caught = e;
  }
  if (caught === undefined) throw new Error(`${action} succeeded; expected ${expected.shape} (${expected.code})`);
  driver.assertError(caught, expected);
}

const v3Commands = {
  CreateQueue: CreateQueueCommand,
  GetQueueUrl: GetQueueUrlCommand,
  ListQueues: ListQueuesCommand,
  DeleteQueue: DeleteQueueCommand,
  GetQueueAttributes: GetQueueAttributesCommand,
  SetQueueAttributes: SetQueueAttributesCommand,
  PurgeQueue: PurgeQueueCommand,
  SendMessage: SendMessageCommand,
  SendMessageBatch: SendMessageBatchCommand,
  ReceiveMessage: ReceiveMessageCommand,
  DeleteMessage: DeleteMessageCommand,
  DeleteMessageBatch: DeleteMessageBatchCommand,
  ChangeMessageVisibility: ChangeMessageVisibilityCommand,
  ChangeMessageVisibilityBatch: ChangeMessageVisibilityBatchCommand,
  TagQueue: TagQueueCommand,
  UntagQueue: UntagQueueCommand,
  ListQueueTags: ListQueueTagsCommand,
  ListDeadLetterSourceQueues: ListDeadLetterSourceQueuesCommand,
  AddPermission: AddPermissionCommand,
  RemovePermission: RemovePermissionCommand,
} as const satisfies Record<ActionName, unknown>;

type AnyCommand = new (input: unknown) => Parameters<SQSClient["send"]>[0];

export function v3Driver(client: SQSClient): SqsDriver {
  return {
    label: "SDK v3 (JSON 1.0)",
    protocol: "json",
    hasMessageSystemAttributeNames: true,
    async call(action, input) {
      const Command = v3Commands[action] as unknown as AnyCommand;
      return (await client.send(new Command(input))) as never;
    },
    assertError(error, expected) {
      // v3 names the error by its model shape; with awsQueryCompatible it copies the
      // x-amzn-query-error header into Code/Type, so a missing header shows up here.
      expect(error, `expected ${expected.shape}`).toMatchObject({
        name: expected.shape,
        Code: expected.code,
        Type: "Sender",
        $metadata: { httpStatusCode: expected.status },
      });
      const message = expectedMessage(expected, "json");
      if (message !== undefined) expect((error as Error).message).toBe(message);
    },
    destroy: () => client.destroy(),
  };
}

export function v2Driver(sqs: AWS.SQS): SqsDriver {
  return {
    label: "SDK v2 2.1490.0 (query/XML)",
    protocol: "query",
    hasMessageSystemAttributeNames: false,
    async call(action, input) {
      const method = (action.charAt(0).toLowerCase() + action.slice(1)) as keyof AWS.SQS;
      const fn = sqs[method] as unknown as (this: AWS.SQS, params: unknown) => AWS.Request<unknown, AWS.AWSError>;
      return (await fn.call(sqs, input).promise()) as never;
    },
    assertError(error, expected) {
      // v2 reads <Error><Code> from the XML ErrorResponse.
      expect(error, `expected ${expected.code}`).toMatchObject({ code: expected.code, statusCode: expected.status });
      const message = expectedMessage(expected, "query");
      if (message !== undefined) expect((error as Error).message).toBe(message);
    },
    destroy: () => destroyV2(sqs),
  };
}
