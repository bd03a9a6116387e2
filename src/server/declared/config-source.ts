/**
 * The declarative config file as text: parsed by its extension (YAML, TOML or JSON, as the
 * credentials file is) into plain values, with a way back from a field's path to its line, so
 * that every error names the file, the line and the field.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse as parseToml } from "smol-toml";
import { type Document, LineCounter, isMap, isPair, isScalar, isSeq, parseDocument } from "yaml";

/** A field's place in the document: map keys and list indexes from the top. */
export type FieldPath = ReadonlyArray<string | number>;

/** What is wrong with the file, in one line: `<file>:<line>: <field>: <problem>`. */
export class DeclaredConfigError extends Error {
  override readonly name = "DeclaredConfigError";
}

export interface ConfigSource {
  file: string;
  /** The parsed document (plain objects, arrays and scalars). */
  value: unknown;
  /** The 1-based line of a field (its key), or of the nearest enclosing one found. */
  lineOf(path: FieldPath): number | undefined;
}

export const configExtensions = [".yaml", ".yml", ".toml", ".json"];

/** `<file>:<line>: <field>: <problem>`, the line left out when unknown and the field when it is the whole file. */
export function describeAt(file: string, line: number | undefined, path: FieldPath, problem: string): string {
  const field = fieldName(path);
  return `${file}${line === undefined ? "" : `:${line}`}: ${field === "" ? "" : `${field}: `}${problem}`;
}

export function fieldName(path: FieldPath): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : /^[A-Za-z0-9_-]+$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join("");
}

/** The first line of a parser's message: they go on to quote the file, and the error is one line. */
function firstLine(message: string): string {
  return message.split("\n")[0]!.replace(/:$/, "");
}

/** A YAML (or JSON, which is YAML) document's key positions. */
function yamlLocator(doc: Document, lines: LineCounter): (path: FieldPath) => number | undefined {
  return (path) => {
    let node: unknown = doc.contents;
    let offset: number | undefined = (doc.contents as { range?: [number] } | null)?.range?.[0];
    for (const key of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key));
        if (!pair) break;
        offset = (pair.key as { range?: [number] }).range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof key === "number") {
        node = node.items[key];
        offset = (node as { range?: [number] } | undefined)?.range?.[0] ?? offset;
      } else break;
    }
    return offset === undefined ? undefined : lines.linePos(offset).line;
  };
}

function parseYamlText(text: string, file: string, kind: string): { value: unknown; lineOf: ConfigSource["lineOf"] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const error = doc.errors[0];
  if (error) throw new DeclaredConfigError(describeAt(file, lines.linePos(error.pos[0]).line, [], `not valid ${kind}: ${firstLine(error.message)}.`));
  return { value: doc.toJS({ maxAliasCount: 100 }) as unknown, lineOf: yamlLocator(doc, lines) };
}

function lineAtOffset(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

/**
 * TOML's parser keeps no positions: a field is found by looking for each key of its path in
 * turn, from where the previous one was found (a table header `[queues.embed]` or `key =`).
 */
function tomlLocator(text: string): (path: FieldPath) => number | undefined {
  const lines = text.split("\n").map((l) => l.replace(/#.*$/, ""));
  return (path) => {
    let at = 0;
    let found: number | undefined;
    for (const key of path) {
      if (typeof key === "number") continue;
      const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const pattern = new RegExp(`(^|[\\s.\\[{,])("${escaped}"|'${escaped}'|${escaped})\\s*(?=[.=\\]])`);
      const index = lines.findIndex((l, i) => i >= at && pattern.test(l));
      if (index < 0) break;
      found = index + 1;
      at = index;
    }
    return found;
  };
}

/** Parses `text` as the format `file`'s extension names. */
export function parseConfigText(text: string, file: string): ConfigSource {
  const ext = extname(file).toLowerCase();
  if (ext === ".yaml" || ext === ".yml") return { file, ...parseYamlText(text, file, "YAML") };
  if (ext === ".json") {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const position = /position (\d+)/.exec((err as Error).message)?.[1];
      throw new DeclaredConfigError(describeAt(file, position === undefined ? undefined : lineAtOffset(text, Number(position)), [], `not valid JSON: ${firstLine((err as Error).message)}.`));
    }
    // JSON is YAML, whose parser keeps positions (and refuses a key given twice, which JSON.parse
    // would take silently); JSON that YAML's parser reads otherwise is taken without line numbers.
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
    const duplicate = doc.errors.find((e) => e.code === "DUPLICATE_KEY");
    if (duplicate) throw new DeclaredConfigError(describeAt(file, lines.linePos(duplicate.pos[0]).line, [], `not valid JSON: ${firstLine(duplicate.message)}.`));
    return { file, value, lineOf: doc.errors.length === 0 ? yamlLocator(doc, lines) : () => undefined };
  }
  if (ext === ".toml") {
    let value: unknown;
    try {
      value = parseToml(text);
    } catch (err) {
      const line = (err as { line?: number }).line;
      throw new DeclaredConfigError(describeAt(file, line, [], `not valid TOML: ${firstLine((err as Error).message).replace(/^Invalid TOML document: /, "")}.`));
    }
    return { file, value, lineOf: tomlLocator(text) };
  }
  throw new DeclaredConfigError(`${file}: a config file ends in ${configExtensions.join(", ")} (its format), not ${JSON.stringify(ext || "(no extension)")}.`);
}

export async function readConfigFile(file: string): Promise<ConfigSource> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DeclaredConfigError(`${file}: cannot read the config file: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "error")}.`);
  }
  return parseConfigText(text, file);
}
