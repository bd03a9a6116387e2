/**
 * Rejects body fields the schema doesn't name. Fastify's Ajv is configured (for the whole app) to
 * silently drop such fields; for this API a typo ("maxAttempt") must be an error, not a no-op.
 * Runs before validation, over the same schemas.
 */
import type { JsonSchema } from "./schemas.js";

/** The path of the first field `schema` doesn't allow, or undefined. */
export function firstUnknownField(value: unknown, schema: JsonSchema, path = "body"): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    if (!items) return undefined;
    for (let i = 0; i < value.length; i++) {
      const nested = firstUnknownField(value[i], items, `${path}[${i}]`);
      if (nested) return nested;
    }
    return undefined;
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return undefined;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    // Own properties only: `constructor` or `toString` must not pass for a field of the schema.
    const childSchema = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!childSchema) {
      if (schema.additionalProperties === false) return `${path}.${key}`;
      continue;
    }
    const nested = firstUnknownField(child, childSchema, `${path}.${key}`);
    if (nested) return nested;
  }
  return undefined;
}
