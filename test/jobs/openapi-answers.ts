/**
 * Checks a real answer of the jobs API against /openapi.json: the route must list the answer's
 * status, and a JSON answer must match the schema published for that status. The jobs HTTP
 * harness runs it on every answer its `api()` gets, so a status the server answers but the
 * document does not list — in any test — fails that test.
 */
import { AjvCompiler } from "@fastify/ajv-compiler";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is JSON of any shape
type OpenApiDocument = any;

export interface JobsAnswer {
  method: string;
  /** The request's path, with its query string if any. */
  url: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/** Fastify's own Ajv, strict about types and extra fields (the published schemas use only keywords that mean the same in draft-07 and OpenAPI 3.1's 2020-12). */
const compile = AjvCompiler()({}, { customOptions: { strict: false, coerceTypes: false, removeAdditional: false, useDefaults: false } }) as unknown as (route: {
  schema: unknown;
}) => ((data: unknown) => boolean) & { errors?: unknown };

const validators = new Map<string, ReturnType<typeof compile>>();

/** The documented operation an answer belongs to: its path template and lower-case method; undefined for other routes (SQS, /healthz). */
export function operationOf(doc: OpenApiDocument, method: string, url: string): { path: string; method: string } | undefined {
  const path = url.split("?")[0]!;
  const m = method.toLowerCase();
  for (const template of Object.keys(doc.paths as object)) {
    const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`);
    if (pattern.test(path) && doc.paths[template][m]) return { path: template, method: m };
  }
  return undefined;
}

/** What is wrong with an answer by the document, or undefined when nothing is (or it is not a documented operation). */
export function openApiProblem(doc: OpenApiDocument, answer: JobsAnswer): string | undefined {
  const op = operationOf(doc, answer.method, answer.url);
  if (!op) return undefined;
  const where = `${answer.method} ${answer.url} (${op.method.toUpperCase()} ${op.path}) answered ${answer.status}`;
  const responses = doc.paths[op.path][op.method].responses;
  // `default` stands for the two answers any route may give (openapi.ts), and only for them.
  const documented = responses[String(answer.status)] ?? (answer.status === 500 || answer.status === 503 ? responses.default : undefined);
  if (!documented) {
    const listed = Object.keys(doc.paths[op.path][op.method].responses as object).join(", ");
    return `${where}, which /openapi.json does not list (it lists ${listed}): ${JSON.stringify(answer.body).slice(0, 300)}`;
  }
  const content = documented.content as Record<string, { schema: unknown }> | undefined;
  if (!content) return undefined;
  const listedTypes = Object.keys(content);
  const mediaType = listedTypes.find((t) => answer.contentType?.startsWith(t));
  if (!mediaType) return `${where} as ${answer.contentType}; /openapi.json says ${listedTypes.join(" or ")}`;
  const { schema } = content[mediaType]!;
  if (mediaType !== "application/json") return undefined;
  const key = `${op.method} ${op.path} ${answer.status}`;
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = compile({ schema: { ...(schema as object), components: doc.components } })));
  return validate(answer.body) ? undefined : `${where} with a body its schema refuses: ${JSON.stringify(validate.errors)}; body ${JSON.stringify(answer.body).slice(0, 300)}`;
}
