/**
 * What an SQS action is: decode the protocol-neutral input into its one request type, run it
 * against core, and encode the result for either protocol. Handlers never see which protocol
 * the client spoke.
 */
import type { AccountQueues, QueueRecord } from "../../core/index.js";
import { type SqsIdentity, queueNameFromUrl, queueUrl } from "./queue-url.js";
import type { WireObject } from "./wire-input.js";

/** What the handler learnt of the request's bytes while reading them. */
export interface InputFacts {
  /**
   * Every string in the input is ASCII from U+0020 up, without quotes or backslashes: a JSON body of
   * ASCII bytes and no backslash (JSON.parse refuses raw control characters in strings, and every
   * other character needs an escape). False when not known.
   */
  plainStrings: boolean;
}

export interface ActionContext extends InputFacts {
  queues: AccountQueues;
  identity: SqsIdentity;
  /** `http://<Host header>`: queue URLs reach the server the way this client did. */
  baseUrl: string;
  /** Aborts when the client goes away or the server shuts down; created on first use. */
  signal(): AbortSignal;
}

export interface SqsAction<Req, Res> {
  decode(input: WireObject, facts: InputFacts): Req;
  run(req: Req, ctx: ActionContext): Promise<Res>;
  /** The JSON body; defaults to the result itself (`{}` for actions without a result). */
  toJson?(res: Res): unknown;
  /** The JSON body as text, where writing it by hand is cheaper than stringifying toJson's value (the same bytes). */
  toJsonText?(res: Res): string;
  /** The content of `<ActionResult>`; absent for actions whose response has no result element. */
  toXml?(res: Res): string;
}

export interface EncodableResult {
  json(): string;
  /** Undefined when the response has no result element. */
  xml(): string | undefined;
}

/** An action with its types erased, as the router holds it. */
export interface RegisteredAction {
  invoke(input: WireObject, ctx: ActionContext): Promise<EncodableResult>;
}

export function defineAction<Req, Res>(action: SqsAction<Req, Res>): RegisteredAction {
  return {
    async invoke(input, ctx) {
      const res = await action.run(action.decode(input, ctx), ctx);
      return {
        json: () => (action.toJsonText ? action.toJsonText(res) : JSON.stringify((action.toJson ? action.toJson(res) : res) ?? {})),
        xml: () => (action.toXml ? action.toXml(res) : undefined),
      };
    },
  };
}

export async function queueForUrl(ctx: ActionContext, url: string): Promise<QueueRecord> {
  return ctx.queues.getQueue(queueNameFromUrl(url, ctx.identity.accountId));
}

export function urlOfQueue(ctx: ActionContext, name: string): string {
  return queueUrl(ctx.baseUrl, ctx.identity.accountId, name);
}
