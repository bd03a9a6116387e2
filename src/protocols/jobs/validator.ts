/**
 * The jobs API's schema compiler. Bodies are JSON, so a value of the wrong type is an error, not
 * something to convert: fastify's default Ajv coerces types, which read `"retryable": null` as
 * `false` (failing a job for good), `"priority": "7"` as 7 and `[5]` as 5. Query strings, path
 * parameters and headers are text, so they keep fastify's coercion (`?wait=5` is the number 5).
 */
import { AjvCompiler } from "@fastify/ajv-compiler";
import type { FastifySchemaCompiler } from "fastify";

type CompileRoute = (route: { schema: unknown; method: string; url: string; httpPart?: string }) => ReturnType<FastifySchemaCompiler<unknown>>;

export function jobsValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const fromPool = AjvCompiler();
  // The package's types describe Ajv's compile(); at run time it takes fastify's route definition.
  const coercing = fromPool({}, { customOptions: {} }) as unknown as CompileRoute;
  const strict = fromPool({}, { customOptions: { coerceTypes: false } }) as unknown as CompileRoute;
  return (route) => (route.httpPart === "body" ? strict(route) : coercing(route));
}
