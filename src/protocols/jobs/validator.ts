/**
 * The jobs API's schema compiler. Bodies are JSON, so a value of the wrong type is an error, not
 * something to convert: fastify's default Ajv coerces types, which read `"retryable": null` as
 * `false` (failing a job for good), `"priority": "7"` as 7 and `[5]` as 5. Query strings, path
 * parameters and headers are text, so they keep fastify's coercion (`?wait=5` is the number 5).
 */
import { AjvCompiler } from "@fastify/ajv-compiler";
import type { FastifySchemaCompiler } from "fastify";
import { SluiceError } from "../../core/index.js";

type CompileRoute = (route: { schema: unknown; method: string; url: string; httpPart?: string }) => ReturnType<FastifySchemaCompiler<unknown>>;

export function jobsValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const fromPool = AjvCompiler();
  // The package's types describe Ajv's compile(); at run time it takes fastify's route definition.
  const coercing = fromPool({}, { customOptions: {} }) as unknown as CompileRoute;
  const strict = fromPool({}, { customOptions: { coerceTypes: false } }) as unknown as CompileRoute;
  return (route) => {
    if (route.httpPart === "body") return strict(route);
    const validate = coercing(route);
    if (route.httpPart !== "querystring") return validate;
    const integers = integerFields(route.schema);
    if (integers.length === 0) return validate;
    // Fastify reads Ajv's errors from the function it called: the wrapper hands them on.
    const wrapped = Object.assign(
      (data: unknown) => {
        const bad = nonDecimal(data, integers);
        if (bad !== undefined) return { error: new SluiceError("ValidationFailed", `querystring.${bad} must be a whole number in decimal digits.`) };
        const result = validate(data);
        wrapped.errors = validate.errors;
        return result;
      },
      { errors: undefined as typeof validate.errors },
    );
    return wrapped;
  };
}

/** The query fields whose schema is an integer. */
function integerFields(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]!.type === "integer");
}

/**
 * Ajv reads text as a number the way JavaScript's Number() does: `0x10` is 16, `1e1` is 10 and
 * ` 5` is 5. A query string is typed by a person or a script: only plain decimal digits count.
 */
function nonDecimal(data: unknown, integers: string[]): string | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const query = data as Record<string, unknown>;
  return integers.find((name) => {
    const v = query[name];
    return Array.isArray(v) || (typeof v === "string" && !/^\d{1,15}$/.test(v));
  });
}
