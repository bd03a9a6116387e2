/**
 * Worker labels and job requirements: a job submitted with `requires` is leased only by a worker
 * whose `labels` contain every pair. A requirement set is stored as its canonical key (its pairs
 * sorted by key, as JSON): the "requirement class" that stores index ready jobs by, so a lease
 * probes the head of each class it can serve instead of scanning other classes' backlogs.
 */
import { fail } from "../errors.js";
import { limits } from "../limits.js";

export type LabelSet = Record<string, string>;

/** Keys: a letter or digit, then letters, digits and `_ . - /` (as Kubernetes label names). */
const keyPattern = /^[A-Za-z0-9][A-Za-z0-9_./-]*$/;
const controlCharacters = /[\u0000-\u001f\u007f]/;

/** Checks a `labels` or `requires` object (string keys and values, bounded); answers it, or undefined for none. */
export function checkLabelSet(field: "labels" | "requires", value: unknown): LabelSet | undefined {
  if (value === undefined) return undefined;
  const j = limits.jobs;
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("ValidationFailed", `${field} must be a JSON object of string keys and string values.`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > j.labelPairsMax) fail("ValidationFailed", `${field} has ${entries.length} pairs; at most ${j.labelPairsMax} are allowed.`);
  for (const [key, v] of entries) {
    if (key.length > j.labelKeyMaxLength || !keyPattern.test(key)) {
      fail("ValidationFailed", `${field}: key ${JSON.stringify(key)} must be 1–${j.labelKeyMaxLength} characters: a letter or digit, then letters, digits, _ . - or /.`);
    }
    if (typeof v !== "string") fail("ValidationFailed", `${field}.${key} must be a string; got ${v === null ? "null" : typeof v}.`);
    if (v.length > j.labelValueMaxLength || controlCharacters.test(v)) {
      fail("ValidationFailed", `${field}.${key} must be at most ${j.labelValueMaxLength} characters, without control characters.`);
    }
  }
  return entries.length === 0 ? undefined : (value as LabelSet);
}

/** A lease's workerId: 1–workerIdMaxLength printable characters. */
export function checkWorkerId(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const max = limits.jobs.workerIdMaxLength;
  if (typeof value !== "string" || value.length < 1 || value.length > max || controlCharacters.test(value)) {
    fail("ValidationFailed", `workerId must be 1–${max} characters without control characters.`);
  }
  return value;
}

/** The canonical key of a requirement set: its pairs sorted by key, as a JSON object. */
export function requirementClassOf(requires: LabelSet): string {
  const sorted: LabelSet = {};
  for (const key of Object.keys(requires).sort()) sorted[key] = requires[key]!;
  return JSON.stringify(sorted);
}

/** Parsed class keys: a queue has few classes, and every labelled lease tests them all. */
const parsedClasses = new Map<string, LabelSet>();
const parsedClassesMax = 10_000;

function pairsOf(classKey: string): LabelSet {
  let pairs = parsedClasses.get(classKey);
  if (pairs === undefined) {
    pairs = JSON.parse(classKey) as LabelSet;
    if (parsedClasses.size >= parsedClassesMax) parsedClasses.clear();
    parsedClasses.set(classKey, pairs);
  }
  return pairs;
}

/** Whether a worker with `labels` may run jobs of the class: its labels contain every pair. */
export function classServable(classKey: string, labels: LabelSet): boolean {
  const pairs = pairsOf(classKey);
  for (const key in pairs) if (labels[key] !== pairs[key]) return false;
  return true;
}

/** Of a queue's classes, those a worker with `labels` can serve (none without labels). */
export function servableClasses(classKeys: readonly string[], labels: LabelSet | undefined): string[] {
  if (labels === undefined) return [];
  return classKeys.filter((k) => classServable(k, labels));
}
