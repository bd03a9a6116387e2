/** AWS SDK clients pointed at a Sluice server, with dummy credentials. */
import { SQSClient } from "@aws-sdk/client-sqs";
import { Agent } from "node:http";
import AWS from "aws-sdk";

export const region = "us-east-1";
export const credentials = { accessKeyId: "test", secretAccessKey: "test" };

/** SDK v3 (JSON protocol). No retries, so an error surfaces as the server sent it. */
export function sqsV3(endpoint: string): SQSClient {
  return new SQSClient({ endpoint, region, credentials, maxAttempts: 1 });
}

/** SDK v2 2.1490.0 (query/XML protocol). No retries. Its own keep-alive agent: `destroyV2(sqs)` frees it. */
export function sqsV2(endpoint: string): AWS.SQS {
  return new AWS.SQS({
    endpoint,
    region,
    credentials: new AWS.Credentials(credentials),
    maxRetries: 0,
    apiVersion: "2012-11-05",
    httpOptions: { agent: new Agent({ keepAlive: true }) },
  });
}

export function destroyV2(sqs: AWS.SQS): void {
  (sqs.config.httpOptions?.agent as Agent | undefined)?.destroy();
}
