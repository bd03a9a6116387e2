/** Id source, injected so tests can make ids deterministic. */
export interface IdSource {
  /** A message id (UUID v4 text, as SQS formats them). */
  messageId(): string;
  /** An unguessable token that makes each receipt handle unique. */
  receiptToken(): string;
}
