/** Batches' lines as the jobs layer's keyed submits, keyed by batch and line (a replayed slice makes no second job). */
import { SluiceError } from "../errors.js";
import type { JobService } from "../jobs/job-service.js";
import type { BatchJobs } from "./batch-service.js";

export function batchJobsOf(jobs: JobService): BatchJobs {
  return {
    keyedItems: (p) => jobs.keyedItems(p),
    announceCreated: (results) => jobs.announceCreated(results),
    async cancel(account, id) {
      await jobs
        .forAccount(account)
        .cancel(id)
        .catch((err: unknown) => {
          // Ended (or pruned) meanwhile: nothing left to cancel.
          if (err instanceof SluiceError && (err.code === "JobAlreadyFinished" || err.code === "JobNotFound" || err.code === "QueueNotFound")) return;
          throw err;
        });
    },
  };
}
