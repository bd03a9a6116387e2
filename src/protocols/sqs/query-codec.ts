/**
 * The query protocol's request side: form-encoded `Action=…&Version=2012-11-05&…` parameters (from
 * a POST body and/or the URL's query string) → the JSON-protocol form of the request, guided by
 * each action's input shape (query-shapes.ts). Responses are XML (xml.ts and each action's toXml).
 */
import { fail } from "../../core/index.js";
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

/**
 * Parameters any query request may carry besides its action's input: the action, the API version,
 * and a signature in the query string (SigV4 presigned URLs; SigV2's, which older tools still send).
 */
const envelopeParams = new Set([
  "Action",
  "Version",
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Date",
  "X-Amz-Expires",
  "X-Amz-SignedHeaders",
  "X-Amz-Signature",
  "X-Amz-Security-Token",
  "AWSAccessKeyId",
  "Signature",
  "SignatureMethod",
  "SignatureVersion",
  "SecurityToken",
  "Timestamp",
  "Expires",
]);

/** Where a parameter no action reads would otherwise be dropped in silence (the queue made without its attributes). */
function unknownParameter(key: string, action: string): never {
  protocolFail("InvalidQueryParameter", `The parameter ${key} is not valid for the action ${action}.`);
}

/** The first full key sent under `node` (`Bogus.1.Name`, not `Bogus`): what the client will recognise. */
function sentKey(path: string, node: FormNode): string {
  while (node.value === undefined && node.children) {
    const [segment, next] = node.children.entries().next().value!;
    path = keyOf(path, segment);
    node = next;
  }
  return path;
}

function keyOf(path: string, segment: string): string {
  return path === "" ? segment : `${path}.${segment}`;
}

const indexSegment = /^\d{1,6}$/;

interface Indexed {
  items: FormNode[];
  /** Each item's key, for an error naming it. */
  keys: string[];
}

const noItems: Indexed = { items: [], keys: [] };

/**
 * Children keyed by 1-based indices, in index order (gaps are tolerated, as SQS does). Any other
 * child is a parameter the list doesn't have.
 */
function indexedChildren(node: FormNode, path: string, action: string): Indexed {
  if (!node.children) return noItems;
  // Older clients spell non-flattened lists as `Name.member.N`.
  const members = node.children.get("member");
  let source = node.children;
  if (members?.children) {
    if (node.children.size > 1) for (const [segment, other] of node.children) if (segment !== "member") unknownParameter(sentKey(keyOf(path, segment), other), action);
    if (members.value !== undefined) unknownParameter(keyOf(path, "member"), action);
    source = members.children;
    path = keyOf(path, "member");
  }
  const items: FormNode[] = [];
  const keys: string[] = [];
  const indices: number[] = [];
  let last = -1;
  let ordered = true;
  for (const [segment, item] of source) {
    if (!indexSegment.test(segment)) unknownParameter(sentKey(keyOf(path, segment), item), action);
    const index = Number(segment);
    if (index < last) ordered = false;
    last = index;
    indices.push(index);
    items.push(item);
    keys.push(keyOf(path, segment));
  }
  if (ordered) return { items, keys };
  // Clients send items in order; a form that doesn't is sorted by number (10 after 9).
  const order = indices.map((_, i) => i).sort((x, y) => indices[x]! - indices[y]!);
  return { items: order.map((i) => items[i]!), keys: order.map((i) => keys[i]!) };
}

function convert(node: FormNode, shape: QueryShape, path: string, action: string): WireValue | undefined {
  if (shape.kind === "scalar") {
    if (node.children) unknownParameter(sentKey(path, { children: node.children }), action);
    return node.value ?? "";
  }
  // `Name=` is how query serializers spell an empty list (`Name=x` a one-item list of strings).
  if (shape.kind === "list" && !node.children && node.value !== undefined) return shape.item.kind === "scalar" ? [node.value] : node.value === "" ? [] : unknownParameter(path, action);
  // A value on a list, map or structure (`Attribute=x`) names nothing the action reads.
  if (node.value !== undefined) unknownParameter(path, action);
  switch (shape.kind) {
    case "list": {
      const out: WireValue[] = [];
      const { items, keys } = indexedChildren(node, path, action);
      for (let i = 0; i < items.length; i++) {
        const v = convert(items[i]!, shape.item, keys[i]!, action);
        if (v !== undefined) out.push(v);
      }
      return out;
    }
    case "map": {
      const out: WireObject = {};
      const { items, keys } = indexedChildren(node, path, action);
      for (let i = 0; i < items.length; i++) {
        const entry = items[i]!;
        const entryPath = keys[i]!;
        if (entry.value !== undefined) unknownParameter(entryPath, action);
        let key: string | undefined;
        let valueNode: FormNode | undefined;
        if (entry.children) {
          for (const [segment, part] of entry.children) {
            if (segment === shape.keyName) {
              if (part.children) unknownParameter(sentKey(keyOf(entryPath, segment), { children: part.children }), action);
              key = part.value;
            } else if (segment === shape.valueName) valueNode = part;
            else unknownParameter(sentKey(keyOf(entryPath, segment), part), action);
          }
        }
        if (key === undefined) fail("MissingParameter", `The request must contain the parameter ${keyOf(entryPath, shape.keyName)}.`);
        refuseProtoKey(key);
        out[key] = valueNode ? convert(valueNode, shape.value, keyOf(entryPath, shape.valueName), action) : shape.value.kind === "scalar" ? "" : {};
      }
      return out;
    }
    case "struct": {
      const out: WireObject = {};
      if (node.children) {
        for (const [segment, memberNode] of node.children) {
          const name = shape.byXmlName.get(segment);
          if (name === undefined) {
            if (path === "" && envelopeParams.has(segment)) continue;
            if (!shape.emptyListNames.has(segment) || memberNode.value !== "" || memberNode.children) unknownParameter(sentKey(keyOf(path, segment), memberNode), action);
            out[segment] ??= [];
            continue;
          }
          out[name] = convert(memberNode, shape.members[name]!.shape, keyOf(path, segment), action);
        }
      }
      for (const name of shape.emptyLists) out[name] ??= [];
      return out;
    }
  }
}

/**
 * The JSON-protocol form of a query request for `action` (which must be a known action). A
 * parameter the action's input doesn't have is refused (InvalidQueryParameter), never dropped.
 */
export function decodeQueryInput(action: string, params: QueryParams): WireObject {
  const shape = queryInputShapes[action];
  if (!shape) return {};
  return convert(params.root, shape, "", action) as WireObject;
}
