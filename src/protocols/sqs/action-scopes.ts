/**
 * The scope an access key needs for each SQS action (docs/security.md): `submit` sends, `work`
 * receives and settles, `read` looks, `admin` does everything else. Finding a queue's URL or
 * attributes is part of every role's work, so any scope may.
 */
import type { Scope } from "../auth/principal.js";

const anyScope: readonly Scope[] = ["submit", "work", "read", "admin"];

const scopesOfAction: Record<string, readonly Scope[]> = {
  SendMessage: ["submit", "admin"],
  SendMessageBatch: ["submit", "admin"],
  ReceiveMessage: ["work", "admin"],
  DeleteMessage: ["work", "admin"],
  DeleteMessageBatch: ["work", "admin"],
  ChangeMessageVisibility: ["work", "admin"],
  ChangeMessageVisibilityBatch: ["work", "admin"],
  GetQueueUrl: anyScope,
  GetQueueAttributes: anyScope,
  ListQueues: ["read", "admin"],
  ListQueueTags: ["read", "admin"],
  ListDeadLetterSourceQueues: ["read", "admin"],
  ListMessageMoveTasks: ["read", "admin"],
};

/** The scopes of which a key needs one for `action` (admin alone for actions not listed). */
export function scopesFor(action: string): readonly Scope[] {
  return scopesOfAction[action] ?? ["admin"];
}
