/**
 * What every batch action shares: the call-level checks (empty, too many, bad or repeated ids)
 * that fail the whole call, per-entry decoding whose failures land in `Failed` without failing
 * the call, and the encoding of result entries.
 */
import { SluiceError, fail, limits, type EntryOutcome } from "../../../core/index.js";
import type { SqsIdentity } from "../queue-url.js";
import { sqsErrorForCode } from "../sqs-errors.js";
import { sqsMessageOf } from "../sqs-wording.js";
import { type WireObject, asObject, optionalList, optionalString } from "../wire-input.js";
import { escapeXml } from "../xml.js";
import { jsonString } from "../json-text.js";

export type DecodedEntry<T> = { id: string } & EntryOutcome<T>;

const batchEntryIdPattern = new RegExp(`^[A-Za-z0-9_-]{1,${limits.batchEntryIdMaxLength}}$`);

/**
 * Decodes `Entries`, failing the call for call-level errors. `entryName` is the query spelling
 * (SendMessageBatchRequestEntry…), used in messages as SQS does.
 */
export function decodeBatchEntries<T>(input: WireObject, entryName: string, decodeEntry: (entry: WireObject) => T): Array<DecodedEntry<T>> {
  const list = optionalList(input, "Entries") ?? [];
  if (list.length === 0) fail("EmptyBatchRequest", `There should be at least one ${entryName} in the request.`);
  if (list.length > limits.batchEntriesMax) {
    fail("TooManyEntriesInBatchRequest", `Maximum number of entries per request are ${limits.batchEntriesMax}. You have sent ${list.length}.`);
  }
  const seen = new Set<string>();
  const entries = list.map((item, i) => {
    const entry = asObject(item, `${entryName}.${i + 1}`);
    const id = optionalString(entry, "Id") ?? "";
    if (!batchEntryIdPattern.test(id)) {
      fail("InvalidBatchEntryId", `A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most ${limits.batchEntryIdMaxLength} letters long.`);
    }
    if (seen.has(id)) fail("BatchEntryIdsNotDistinct", `Id ${id} repeated.`);
    seen.add(id);
    return { id, entry };
  });
  return entries.map(({ id, entry }) => {
    try {
      return { id, ok: true, value: decodeEntry(entry) };
    } catch (err) {
      if (!(err instanceof SluiceError)) throw err;
      return { id, ok: false, error: err };
    }
  });
}

/**
 * Runs the decoded-ok entries through `run` (which returns one outcome per value, in order) and
 * merges its outcomes back with the entries that failed to decode, keeping the request's order.
 */
export async function runBatch<T, R>(entries: Array<DecodedEntry<T>>, run: (values: T[]) => Promise<Array<EntryOutcome<R>>>): Promise<Array<DecodedEntry<R>>> {
  const values: T[] = [];
  for (const e of entries) if (e.ok) values.push(e.value);
  const outcomes = values.length > 0 ? await run(values) : [];
  let k = 0;
  return entries.map((e) => (e.ok ? { id: e.id, ...outcomes[k++]! } : { id: e.id, ok: false, error: e.error }));
}

export interface BatchResultErrorEntry {
  Id: string;
  SenderFault: boolean;
  Code: string;
  Message: string;
}

/** A failed entry as SQS reports it: its code and its words for core's error (sqs-wording.ts). */
export function failedEntry(id: string, error: SluiceError, identity: SqsIdentity): BatchResultErrorEntry {
  const spec = sqsErrorForCode[error.code];
  return { Id: id, SenderFault: spec.fault === "Sender", Code: spec.queryCode, Message: sqsMessageOf(error, identity) };
}

/** Splits outcomes into SQS's Successful / Failed lists; `identity` is the account the request works on. */
export function partitionResults<R, S>(
  results: Array<DecodedEntry<R>>,
  success: (id: string, value: R) => S,
  identity: SqsIdentity,
): { Successful: S[]; Failed: BatchResultErrorEntry[] } {
  const Successful: S[] = [];
  const Failed: BatchResultErrorEntry[] = [];
  for (const r of results) {
    if (r.ok) Successful.push(success(r.id, r.value));
    else Failed.push(failedEntry(r.id, r.error, identity));
  }
  return { Successful, Failed };
}

/**
 * `{"Successful":[…],"Failed":[…]}` as JSON.stringify writes it, each successful entry's members
 * written by `successMembers` (the text between its braces): a batch answer by concatenation,
 * without JSON.stringify's walk over objects whose absent members are undefined.
 */
export function batchResultJsonText<S>(res: { Successful: S[]; Failed: BatchResultErrorEntry[] }, successMembers: (entry: S) => string): string {
  let text = '{"Successful":[';
  for (let i = 0; i < res.Successful.length; i++) text += `${i === 0 ? "" : ","}{${successMembers(res.Successful[i]!)}}`;
  text += '],"Failed":[';
  for (let i = 0; i < res.Failed.length; i++) {
    const e = res.Failed[i]!;
    text += `${i === 0 ? "" : ","}{"Id":${jsonString(e.Id)},"SenderFault":${e.SenderFault},"Code":${jsonString(e.Code)},"Message":${jsonString(e.Message)}}`;
  }
  return `${text}]}`;
}

export function failedEntriesXml(entries: BatchResultErrorEntry[]): string {
  let out = "";
  for (const e of entries) {
    out += `<BatchResultErrorEntry><Id>${escapeXml(e.Id)}</Id><SenderFault>${e.SenderFault}</SenderFault><Code>${escapeXml(e.Code)}</Code><Message>${escapeXml(e.Message)}</Message></BatchResultErrorEntry>`;
  }
  return out;
}

/** Result entries that carry only an Id (DeleteMessageBatch, ChangeMessageVisibilityBatch). */
export function idEntriesXml(elementName: string, entries: Array<{ Id: string }>): string {
  let out = "";
  for (const e of entries) out += `<${elementName}><Id>${escapeXml(e.Id)}</Id></${elementName}>`;
  return out;
}
