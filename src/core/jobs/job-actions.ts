/**
 * Job actions by id (JobStore.jobTransitionMany) as core sends them: one alone, its refusal
 * thrown as the SluiceError the store answered; or many in one call, each answered on its own.
 */
import { type ErrorCode, SluiceError } from "../errors.js";
import type { JobAction, JobActionResult, JobChange, JobStore } from "../job-store.js";

/** The refusal an action was answered with, as the error it was raised as. */
export function actionError(result: JobActionResult & { ok: false }): SluiceError {
  return new SluiceError(result.error.code as ErrorCode, result.error.message);
}

/** One action in a call of its own: its change, or its refusal thrown. */
export async function transitionJob(store: Pick<JobStore, "jobTransitionMany">, nowMs: number, action: JobAction): Promise<JobChange> {
  const [result] = await store.jobTransitionMany({ nowMs, actions: [action] });
  if (!result!.ok) throw actionError(result!);
  return result!.change;
}
