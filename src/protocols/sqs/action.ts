/**
 * What an SQS action is: decode the protocol-neutral input into its one request type, run it
 * against core, and encode the result for either protocol. Handlers never see which protocol
 * the client spoke.
 */
import type { AccountQueues, QueueRecord } from "../../core/index.js";
import { type SqsIdentity, queueNameFromUrl, queueUrl } from "./queue-url.js";
import type { WireObject } from "./wire-input.js";

export interface ActionContext {
  queues: AccountQueues;
  identity: SqsIdentity;
  /** `http://<Host header>`: queue URLs reach the server the way this client did. */
  baseUrl: string;
  /** Aborts when the client goes away or the server shuts down; created on first use. */
  signal(): AbortSignal;
}

export interface SqsAction<Req, Res> {
  decode(input: WireObject): Req;
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
      const res = await action.run(action.decode(input), ctx);
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
