/**
 * Queue URLs and ARNs. A URL is built from the request's Host header, so it reaches the server the
 * way the client did; parsing ignores the host (clients rewrite it behind proxies and in
 * containers) and takes the last path segment as the queue name.
 */
import { fail } from "../../core/index.js";

export interface SqsIdentity {
  accountId: string;
  region: string;
}

export function queueUrl(baseUrl: string, accountId: string, queueName: string): string {
  return `${baseUrl}/${accountId}/${queueName}`;
}

export function queueArn(identity: SqsIdentity, queueName: string): string {
  return `arn:aws:sqs:${identity.region}:${identity.accountId}:${queueName}`;
}

/** The queue name in an SQS ARN of this account and region, or undefined when it isn't one. */
export function queueNameFromArn(identity: SqsIdentity, arn: string): string | undefined {
  const parts = arn.split(":");
  if (parts.length !== 6 || parts[0] !== "arn" || parts[2] !== "sqs") return undefined;
  if (parts[3] !== identity.region || parts[4] !== identity.accountId) return undefined;
  return parts[5] || undefined;
}

function notFound(): never {
  fail("QueueNotFound", "The specified queue does not exist.");
}

/** The queue name a QueueUrl points at, checking that the account segment (if any) is ours. */
export function queueNameFromUrl(url: string, accountId: string): string {
  let path = url;
  const scheme = path.indexOf("://");
  if (scheme !== -1) {
    const slash = path.indexOf("/", scheme + 3);
    path = slash === -1 ? "" : path.slice(slash);
  }
  const query = path.search(/[?#]/);
  if (query !== -1) path = path.slice(0, query);
  // An empty segment (`//queue`, `/000000000000//queue`) names no account or queue: never a queue URL.
  const segments = (path.startsWith("/") ? path.slice(1) : path).split("/");
  if (segments.length > 0 && segments[segments.length - 1] === "") segments.pop();
  if (segments.some((s) => s.length === 0)) notFound();
  const name = segments[segments.length - 1];
  if (!name) notFound();
  const account = segments[segments.length - 2];
  if (account !== undefined && account !== accountId) notFound();
  return name;
}
