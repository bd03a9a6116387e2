/** The error an SQS call failed with, through either client, or a failure when it succeeded. */
import type { SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import type AWS from "aws-sdk";

/** @aws-sdk/client-sqs v3 (JSON): the exception's name, HTTP status and message. */
export async function v3ErrorOf(client: SQSClient, command: object): Promise<{ name: string; status: number | undefined; message: string }> {
  const err = (await client.send(command as SendMessageCommand).then(
    () => undefined,
    (e: unknown) => e,
  )) as { name: string; message: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!err) throw new Error("the request succeeded");
  return { name: err.name, status: err.$metadata?.httpStatusCode, message: err.message };
}

/** aws-sdk v2 (query): the error code and HTTP status. */
export async function v2ErrorOf(request: AWS.Request<unknown, AWS.AWSError>): Promise<{ code: string; statusCode: number | undefined }> {
  const err = (await request.promise().then(
    () => undefined,
    (e: unknown) => e,
  )) as AWS.AWSError | undefined;
  if (!err) throw new Error("the request succeeded");
  return { code: err.code, statusCode: err.statusCode };
}
