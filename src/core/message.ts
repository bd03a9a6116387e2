/** The shapes of messages as core sees them: what a sender gives, what a store keeps, what a receiver gets. */

export interface MessageAttributeValue {
  /** "String", "Number", "Binary", optionally with a custom suffix ("Number.float"). */
  dataType: string;
  stringValue?: string;
  binaryValue?: Uint8Array;
}

export type MessageAttributes = Record<string, MessageAttributeValue>;

/** A message to enqueue, after validation, with everything decided by core. */
export interface NewMessage {
  messageId: string;
  body: string;
  attributes: MessageAttributes;
  /** System attributes a sender may set (AWSTraceHeader). */
  systemAttributes: MessageAttributes;
  /** Digests computed once at send, so receives don't recompute them. */
  bodyMd5: string;
  attributesMd5?: string;
  systemAttributesMd5?: string;
  sentAtMs: number;
  visibleAtMs: number;
  priority: number;
  groupId?: string;
  deduplicationId?: string;
  senderId: string;
  /**
   * The body is ASCII from U+0020 up, without quotes or backslashes (known at send from the
   * request's bytes): a receive writes it into JSON without scanning it. Not stored: a store
   * returns it only with content it kept in memory from the send; absent means not known.
   */
  bodyPlain?: boolean;
}

/** A message as a store keeps it. */
export interface StoredMessage extends NewMessage {
  /** Store-assigned, strictly increasing per store: the FIFO order and the SequenceNumber source. */
  seq: number;
  queueId: number;
  receiveCount: number;
  firstReceivedAtMs?: number;
  /** Changes on every receive; a receipt handle is valid only while it matches. */
  receiptToken?: string;
  /** Set while the message sits in a dead-letter queue: the queue it was moved from. */
  deadLetterSourceQueueName?: string;
}
