/**
 * The decoded, protocol-neutral form of a request: the JSON protocol's object shape (member names
 * as in the smithy model). The JSON codec produces it with JSON.parse; the query codec rebuilds it
 * from flattened form keys. Readers here turn it into each action's typed request, so both
 * protocols share one validation path.
 */
import { fail } from "../../core/index.js";

export type WireValue = string | number | boolean | null | WireValue[] | WireObject;
export interface WireObject {
  [member: string]: WireValue | undefined;
}

export function isWireObject(value: unknown): value is WireObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function missing(name: string): never {
  fail("MissingParameter", `The request must contain the parameter ${name}.`);
}

function invalid(name: string, value: unknown, reason: string): never {
  fail("InvalidParameterValue", `Value ${typeof value === "string" ? value : JSON.stringify(value)} for parameter ${name} is invalid. Reason: ${reason}`);
}

export function optionalString(o: WireObject, name: string, label = name): string | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  // Hand-written JSON clients send numbers where the model says string (e.g. a Number attribute).
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  invalid(label, v, "Must be a string.");
}

export function requiredString(o: WireObject, name: string, label = name): string {
  const v = optionalString(o, name, label);
  if (v === undefined) missing(label);
  return v;
}

const integerText = /^[-+]?\d{1,15}$/;

export function optionalInteger(o: WireObject, name: string, label = name): number | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  if (typeof v === "string" && integerText.test(v.trim())) return Number(v.trim());
  invalid(label, v, "Must be an integer.");
}

export function requiredInteger(o: WireObject, name: string, label = name): number {
  const v = optionalInteger(o, name, label);
  if (v === undefined) missing(label);
  return v;
}

export function optionalObject(o: WireObject, name: string, label = name): WireObject | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  if (isWireObject(v)) return v;
  invalid(label, v, "Must be a map.");
}

export function optionalList(o: WireObject, name: string, label = name): WireValue[] | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v;
  invalid(label, v, "Must be a list.");
}

export function requiredList(o: WireObject, name: string, label = name): WireValue[] {
  const v = optionalList(o, name, label);
  if (v === undefined) missing(label);
  return v;
}

export function optionalStringList(o: WireObject, name: string, label = name): string[] | undefined {
  const list = optionalList(o, name, label);
  if (!list) return undefined;
  return list.map((item) => {
    if (typeof item !== "string") invalid(label, item, "Must be a list of strings.");
    return item;
  });
}

/** A map of strings to strings (queue attributes, tags). */
export function optionalStringMap(o: WireObject, name: string, label = name): Record<string, string> | undefined {
  const map = optionalObject(o, name, label);
  if (!map) return undefined;
  const out: Record<string, string> = {};
  for (const key in map) {
    const v = map[key];
    if (typeof v === "string") out[key] = v;
    else if (typeof v === "number" || typeof v === "boolean") out[key] = String(v);
    else invalid(`${label}.${key}`, v, "Must be a string.");
  }
  return out;
}

/** List elements that must be structures (batch entries). */
export function asObject(value: WireValue, label: string): WireObject {
  if (isWireObject(value)) return value;
  invalid(label, value, "Must be a structure.");
}

/** A map that must be present and not empty (SetQueueAttributes' Attributes, TagQueue's Tags). */
export function requiredStringMap(o: WireObject, name: string, label = name): Record<string, string> {
  const map = optionalStringMap(o, name, label);
  if (map === undefined || Object.keys(map).length === 0) missing(label);
  return map;
}

/** A list of strings that must be present and not empty (UntagQueue's TagKeys). */
export function requiredStringList(o: WireObject, name: string, label = name): string[] {
  const list = optionalStringList(o, name, label);
  if (list === undefined || list.length === 0) missing(label);
  return list;
}

/**
 * `__proto__` as a key: JSON.parse keeps it as a field, but copying it into a plain object sets
 * the object's prototype instead, so the name would vanish without an error. Refused wherever it
 * appears (attribute names, tag keys, fields).
 */
export function refuseProtoKey(key: string): void {
  if (key === "__proto__") fail("InvalidParameterValue", 'The name "__proto__" is not accepted (as an attribute name, a tag key or any other key).');
}
