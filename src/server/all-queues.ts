/** Every queue of the service's account, a page at a time in name order: for the background loops and the metrics scrape. */
import type { AccountQueues, QueueRecord, QueueService } from "../core/index.js";

const queuesPerPage = 1_000;

export async function* allQueues(queues: AccountQueues): AsyncGenerator<QueueRecord> {
  let afterName: string | undefined;
  for (;;) {
    const page = await queues.listQueues({ maxResults: queuesPerPage, afterName });
    yield* page.queues;
    if (!page.hasMore || page.queues.length === 0) return;
    afterName = page.queues[page.queues.length - 1]!.name;
  }
}

/** Every queue of every account ("" first: the server's own), each account's in name order. */
export async function* everyAccountsQueues(queues: QueueService): AsyncGenerator<QueueRecord> {
  for (const account of await queues.listAccounts()) yield* allQueues(queues.forAccount(account));
}
