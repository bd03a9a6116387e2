/** Id source, injected so tests can make ids deterministic. */
export interface IdSource {
  /** A message id (and job id): UUID text; the server's are time-ordered v7 (src/server/ids.ts). */
  messageId(): string;
  /** An unguessable token that makes each receipt handle unique. */
  receiptToken(): string;
}
