/**
 * Messages between the main thread and the store worker. Both directions carry arrays: every call
 * made in one main-thread turn travels in one message, and every reply of one commit comes back
 * in one message — so callers continue together and their next calls share the next commit.
 */
import type { ErrorCode } from "../../core/errors.js";

export interface WorkerRequest {
  id: number;
  method: string;
  params: unknown;
}

export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { code?: ErrorCode; message: string } };
