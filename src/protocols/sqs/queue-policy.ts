/**
 * What a queue's Policy (IAM JSON, written by AddPermission or SetQueueAttributes) lets another
 * account do. A queue's own account is governed by its keys' scopes; another account's key may
 * call an action on the queue only when an Allow statement names its account (or everyone), the
 * action and the queue, and no Deny statement matches. Conditions can't be evaluated here (no
 * IAM context): an Allow with a Condition grants nothing, a Deny with one denies — a policy never
 * grants more than it says (docs/security.md, "Sharing a queue with another account").
 */

/** Actions another account can be granted (SQS's cross-account actions); batches count as their single form. */
const crossAccountActions: Readonly<Record<string, string>> = {
  SendMessage: "SendMessage",
  SendMessageBatch: "SendMessage",
  ReceiveMessage: "ReceiveMessage",
  DeleteMessage: "DeleteMessage",
  DeleteMessageBatch: "DeleteMessage",
  ChangeMessageVisibility: "ChangeMessageVisibility",
  ChangeMessageVisibilityBatch: "ChangeMessageVisibility",
  GetQueueAttributes: "GetQueueAttributes",
  GetQueueUrl: "GetQueueUrl",
  ListDeadLetterSourceQueues: "ListDeadLetterSourceQueues",
  PurgeQueue: "PurgeQueue",
};

/** The action a policy is checked for, or undefined when no policy can grant it to another account. */
export function crossAccountActionOf(action: string): string | undefined {
  return Object.hasOwn(crossAccountActions, action) ? crossAccountActions[action] : undefined;
}

export interface PolicyRequest {
  /** The account of the key that signed the request. */
  callerAccountId: string;
  /** An SQS action name (SendMessageBatch is checked as SendMessage). */
  action: string;
  queueArn: string;
}

interface Statement {
  effect: "Allow" | "Deny";
  /** The accounts it applies to (NotPrincipal: every account it doesn't list). */
  principals: Matcher;
  actions: Matcher;
  resources: Matcher;
  conditional: boolean;
}

type Matcher = (value: string) => boolean;

const anything: Matcher = () => true;
const nothing: Matcher = () => false;

/** IAM wildcards: `*` any run of characters, `?` one character; case-sensitive unless told. */
function wildcard(pattern: string, ignoreCase: boolean): Matcher {
  if (pattern === "*") return anything;
  if (!/[*?]/.test(pattern)) return ignoreCase ? (v) => v.toLowerCase() === pattern.toLowerCase() : (v) => v === pattern;
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  const re = new RegExp(`^${source}$`, ignoreCase ? "is" : "s");
  return (v) => re.test(v);
}

function strings(value: unknown): string[] | undefined {
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")) return value as string[];
  return undefined;
}

function anyOf(matchers: Matcher[]): Matcher {
  return (v) => matchers.some((m) => m(v));
}

/** An account principal: `*`, a 12-digit account id, or the account's root ARN; other ARNs (users, roles) name no account of ours. */
function accountMatcher(principal: string): Matcher {
  if (principal === "*") return anything;
  if (/^\d{12}$/.test(principal)) return (account) => account === principal;
  const root = /^arn:aws:iam::(\d{12}):root$/.exec(principal);
  return root ? (account) => account === root[1] : nothing;
}

function principalMatcher(value: unknown): Matcher | undefined {
  if (value === "*") return anything;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const aws = strings((value as Record<string, unknown>).AWS);
  return aws ? anyOf(aws.map(accountMatcher)) : undefined;
}

/** `sqs:SendMessage`, `SQS:Send*`, `*`, matched against an action name: prefix and action both case-insensitive. */
function actionMatcher(pattern: string): Matcher {
  if (pattern === "*") return anything;
  const colon = pattern.indexOf(":");
  if (colon === -1 || pattern.slice(0, colon).toLowerCase() !== "sqs") return nothing;
  return wildcard(pattern.slice(colon + 1), true);
}

function negated(m: Matcher): Matcher {
  return (v) => !m(v);
}

/** One statement; undefined when it is malformed (it then grants and denies nothing). */
function parseStatement(raw: unknown): Statement | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const s = raw as Record<string, unknown>;
  if (s.Effect !== "Allow" && s.Effect !== "Deny") return undefined;
  const principal = "Principal" in s ? principalMatcher(s.Principal) : "NotPrincipal" in s ? principalMatcher(s.NotPrincipal) : undefined;
  if (!principal) return undefined;
  const actionList = strings(s.Action ?? s.NotAction);
  if (!actionList) return undefined;
  const actions = anyOf(actionList.map(actionMatcher));
  // A queue's policy is about that queue: no Resource means the queue itself.
  const resourceList = "Resource" in s || "NotResource" in s ? strings(s.Resource ?? s.NotResource) : ["*"];
  if (!resourceList) return undefined;
  const resources = anyOf(resourceList.map((r) => wildcard(r, false)));
  return {
    effect: s.Effect,
    principals: "NotPrincipal" in s ? negated(principal) : principal,
    actions: "NotAction" in s ? negated(actions) : actions,
    resources: "NotResource" in s ? negated(resources) : resources,
    conditional: s.Condition !== undefined,
  };
}

/** The statements of a policy text; undefined when it isn't a policy (nothing is granted). */
function parsePolicy(text: string): Statement[] | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof doc !== "object" || doc === null) return undefined;
  const raw = (doc as Record<string, unknown>).Statement;
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  const statements: Statement[] = [];
  for (const item of list) {
    const statement = parseStatement(item);
    // A Deny that can't be read might have denied this request: the whole policy grants nothing.
    if (!statement && typeof item === "object" && item !== null && (item as Record<string, unknown>).Effect === "Deny") return undefined;
    if (statement) statements.push(statement);
  }
  return statements;
}

/** Parsed policies by text: a queue's policy is read on every cross-account request and changes rarely. */
const parsed = new Map<string, Statement[] | undefined>();
const parsedMax = 256;

function statementsOf(text: string): Statement[] | undefined {
  if (parsed.has(text)) return parsed.get(text);
  const statements = parsePolicy(text);
  if (parsed.size >= parsedMax) parsed.delete(parsed.keys().next().value!);
  parsed.set(text, statements);
  return statements;
}

/** Whether the queue's policy lets the caller's account make this request. */
export function queuePolicyAllows(policy: string | undefined, request: PolicyRequest): boolean {
  const action = crossAccountActionOf(request.action);
  if (policy === undefined || action === undefined) return false;
  const statements = statementsOf(policy);
  if (!statements) return false;
  let allowed = false;
  for (const s of statements) {
    if (!s.principals(request.callerAccountId) || !s.actions(action) || !s.resources(request.queueArn)) continue;
    if (s.effect === "Deny") return false;
    if (!s.conditional) allowed = true;
  }
  return allowed;
}
