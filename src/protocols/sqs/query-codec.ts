/**
 * The query protocol's request side: form-encoded `Action=…&Version=2012-11-05&…` parameters (from
 * a POST body and/or the URL's query string) → the JSON-protocol form of the request, guided by
 * each action's input shape (query-shapes.ts). Responses are XML (xml.ts and each action's toXml).
 */
import { protocolFail } from "./sqs-errors.js";
import { type QueryShape, queryInputShapes } from "./query-shapes.js";
import { type WireObject, type WireValue, refuseProtoKey } from "./wire-input.js";

/** One key segment of `A.1.B`: a value, children, or both (then the value is ignored). */
interface FormNode {
  value?: string;
  children?: Map<string, FormNode>;
}

export interface QueryParams {
  root: FormNode;
}

function decodeComponent(text: string): string {
  const plusless = text.includes("+") ? text.replace(/\+/g, " ") : text;
  if (!plusless.includes("%")) return plusless;
  try {
    return decodeURIComponent(plusless);
  } catch {
    protocolFail("MalformedQueryString", `The query string contains an invalid percent-encoding: ${text.slice(0, 100)}`);
  }
}

function child(node: FormNode, segment: string): FormNode {
  node.children ??= new Map();
  let next = node.children.get(segment);
  if (!next) node.children.set(segment, (next = {}));
  return next;
}

/** Adds the pairs of a form-encoded string to `params` (later pairs win over earlier ones). */
export function addFormPairs(params: QueryParams, text: string): void {
  if (text.length === 0) return;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("&", start);
    if (end === -1) end = text.length;
    if (end > start) {
      const eq = text.indexOf("=", start);
      const hasValue = eq !== -1 && eq < end;
      const key = decodeComponent(text.slice(start, hasValue ? eq : end));
      const value = hasValue ? decodeComponent(text.slice(eq + 1, end)) : "";
      let node = params.root;
      for (const segment of key.split(".")) node = child(node, segment);
      node.value = value;
    }
    start = end + 1;
  }
}

export function emptyQueryParams(): QueryParams {
  return { root: {} };
}

/** A top-level scalar parameter, such as Action or Version. */
export function topLevelParam(params: QueryParams, name: string): string | undefined {
  return params.root.children?.get(name)?.value;
}

/** Children keyed by 1-based indices, in index order (gaps are tolerated, as SQS does). */
function indexedChildren(node: FormNode): FormNode[] {
  if (!node.children) return [];
  // Older clients spell non-flattened lists as `Name.member.N`.
  const members = node.children.get("member");
  const source = members?.children ? members.children : node.children;
  const indexed: Array<[number, FormNode]> = [];
  for (const [segment, item] of source) {
    if (/^\d{1,6}$/.test(segment)) indexed.push([Number(segment), item]);
  }
  return indexed.sort((a, b) => a[0] - b[0]).map(([, item]) => item);
}

function convert(node: FormNode, shape: QueryShape): WireValue | undefined {
  switch (shape.kind) {
    case "scalar":
      return node.value ?? "";
    case "list": {
      if (!node.children && node.value !== undefined && shape.item.kind === "scalar") return [node.value];
      const out: WireValue[] = [];
      for (const item of indexedChildren(node)) {
        const v = convert(item, shape.item);
        if (v !== undefined) out.push(v);
      }
      return out;
    }
    case "map": {
      const out: WireObject = {};
      for (const entry of indexedChildren(node)) {
        const key = entry.children?.get(shape.keyName)?.value;
        if (key === undefined) continue;
        refuseProtoKey(key);
        const valueNode = entry.children?.get(shape.valueName);
        out[key] = valueNode ? convert(valueNode, shape.value) : shape.value.kind === "scalar" ? "" : {};
      }
      return out;
    }
    case "struct": {
      const out: WireObject = {};
      for (const name in shape.members) {
        const member = shape.members[name]!;
        const memberNode = node.children?.get(member.xmlName);
        if (memberNode) out[name] = convert(memberNode, member.shape);
        else if (member.shape.kind === "list" && member.shape.absentIsEmpty) out[name] = [];
      }
      return out;
    }
  }
}

/** The JSON-protocol form of a query request for `action` (which must be a known action). */
export function decodeQueryInput(action: string, params: QueryParams): WireObject {
  const shape = queryInputShapes[action];
  if (!shape) return {};
  return convert(params.root, shape) as WireObject;
}
