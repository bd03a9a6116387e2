/**
 * A job's message keeps no body of its own: the job row holds the input (message-insert.ts:
 * jobs, leased, classed), and the message row '' with body_bytes set. What reads messages as
 * SQS sees them puts the body back from the job, by the message id (the job's id).
 */
import type Database from "better-sqlite3";
import type { MessageRow } from "../codecs/message-row.js";
import { jobInputSql } from "./job-rows.js";

/** The body of the `messages` row `alias` keeps in its job, as a scalar subquery. */
export function keptBodySql(alias: string): string {
  return `(SELECT ${jobInputSql("j")} FROM jobs j WHERE j.id = ${alias}.message_id)`;
}

/** A message row as read with `SELECT *`: body_bytes set means its body is its job's input. */
export type KeptBodyRow = MessageRow & { body_bytes?: number | null };

/** Returns `row` with its body put back, when its job keeps it. */
export function prepareKeptBody(db: Database.Database): <R extends KeptBodyRow>(row: R) => R {
  const input = db.prepare<[string], string>(`SELECT ${jobInputSql("j")} FROM jobs j WHERE j.id = ?`).pluck();
  return (row) => {
    if (row.body_bytes === null || row.body_bytes === undefined) return row;
    // A job pruned while its message lives on has nothing to give: the row's own '' stays.
    return { ...row, body: input.get(row.message_id) ?? row.body };
  };
}
