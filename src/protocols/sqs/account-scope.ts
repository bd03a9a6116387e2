/**
 * Which account's queues an SQS request works on. A signed request works on its key's account
 * (open mode: the server's own); each account has its own queues, URLs and ARNs. A queue URL, or
 * GetQueueUrl's QueueOwnerAWSAccountId, naming another account reaches that account's queue only
 * when the queue's Policy grants the caller's account the action (queue-policy.ts, written by
 * AddPermission or SetQueueAttributes). Anything else is AccessDenied, as SQS answers — a missing
 * queue too, so no account learns which queues another has.
 */
import type { AccountQueues, QueueService } from "../../core/index.js";
import { crossAccountActionOf, queuePolicyAllows } from "./queue-policy.js";
import type { SqsIdentity } from "./queue-url.js";
import { protocolFail } from "./sqs-errors.js";
import type { WireObject } from "./wire-input.js";

export interface AccountScope {
  /** Queue names resolve in the scope's account. */
  queues: AccountQueues;
  /** The account that owns the queues: URLs and ARNs in answers name it. */
  identity: SqsIdentity;
}

export interface AccountScopeOptions {
  /** The server's service; its own account (--account-id) is the store's "" account. */
  queues: QueueService;
  defaultAccountId: string;
  region: string;
}

const accountIdPattern = /^\d{12}$/;

/** The account segment of a queue URL (`…/<account>/<queue>`) and its queue name, when it has one. */
function urlAccount(url: string): { accountId: string; queueName: string } | undefined {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").replace(/[?#].*$/, "");
  const segments = path.split("/").filter((s, i, all) => s !== "" || i !== all.length - 1);
  const queueName = segments.at(-1);
  const accountId = segments.at(-2);
  return queueName && accountId !== undefined && accountIdPattern.test(accountId) ? { accountId, queueName } : undefined;
}

/** The other account (and queue) a request names, if it names one. */
function namedOwner(action: string, input: WireObject): { accountId: string; queueName: string } | undefined {
  if (typeof input.QueueUrl === "string") return urlAccount(input.QueueUrl);
  if (action === "GetQueueUrl" && typeof input.QueueOwnerAWSAccountId === "string" && typeof input.QueueName === "string") {
    return accountIdPattern.test(input.QueueOwnerAWSAccountId) ? { accountId: input.QueueOwnerAWSAccountId, queueName: input.QueueName } : undefined;
  }
  return undefined;
}

export class AccountScopes {
  constructor(private readonly o: AccountScopeOptions) {}

  /** The store's name for an account: "" for the server's own, so queues made before accounts keep theirs. */
  private storeAccount(accountId: string): string {
    return accountId === this.o.defaultAccountId ? "" : accountId;
  }

  private scope(accountId: string): AccountScope {
    return { queues: this.o.queues.forAccount(this.storeAccount(accountId)), identity: { accountId, region: this.o.region } };
  }

  /** The scope of one request by `callerAccountId` (undefined: open mode, the server's own account). */
  async resolve(p: { callerAccountId: string | undefined; action: string; input: WireObject; baseUrl: string }): Promise<AccountScope> {
    const caller = p.callerAccountId ?? this.o.defaultAccountId;
    const owner = namedOwner(p.action, p.input);
    if (owner === undefined || owner.accountId === caller) return this.scope(caller);
    const scope = this.scope(owner.accountId);
    const queue = crossAccountActionOf(p.action) === undefined ? undefined : await scope.queues.findQueue(owner.queueName);
    const queueArn = `arn:aws:sqs:${this.o.region}:${owner.accountId}:${owner.queueName}`;
    if (!queue || !queuePolicyAllows(queue.config.policy, { callerAccountId: caller, action: p.action, queueArn })) {
      protocolFail("AccessDenied", `Access to the resource ${p.baseUrl}/${owner.accountId}/${owner.queueName} is denied.`);
    }
    return scope;
  }
}
