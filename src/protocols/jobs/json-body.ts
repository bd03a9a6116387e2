/**
 * The jobs API's JSON body parser: fastify's own (same limits, same prototype-poisoning guard),
 * except that an empty body is read as no body. Many clients send `Content-Type: application/json`
 * with nothing after it on a bodyless POST (`curl -H 'content-type: application/json' -X POST`,
 * fetch wrappers, axios defaults); fastify refuses that outright, so `POST /v1/jobs/{id}/cancel`
 * failed for them. With no body, a route without a body schema simply runs, and a route with one
 * gets the same ValidationFailed as a request that sent no body at all (routes.ts).
 */
import type { FastifyInstance } from "fastify";
import { SluiceError } from "../../core/index.js";
import { decodeUtf8, jsonTooDeep, maxJsonDepth, valueTooDeep } from "../http/json-depth.js";
import type { JsonSchema } from "./schemas.js";

export function acceptEmptyJsonBodies(app: FastifyInstance): void {
  // The app's own poisoning settings, so this parser is as strict as the one it replaces.
  const { onProtoPoisoning = "error", onConstructorPoisoning = "error" } = app.initialConfig;
  const parseJson = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  app.removeContentTypeParser("application/json");
  const tooDeep = (): SluiceError => new SluiceError("ValidationFailed", `The request body nests JSON deeper than ${maxJsonDepth} levels.`);
  // Bytes first: text that isn't UTF-8 is refused (decoding it would put U+FFFD in the job), and
  // so is JSON nested deeper than the limit, before anything recurses over it: the parse doesn't,
  // nor does the poisoning guard's walk (json-depth.ts). A text both too deep and otherwise refused
  // is named too deep, as when its text was measured first.
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    const text = decodeUtf8(body as Buffer);
    if (text === undefined) return done(new SluiceError("ValidationFailed", "The request body is not valid UTF-8."), undefined);
    // The default JSON parser answers through its callback; its type also admits a promise form.
    void parseJson(request, text, (err, value) => {
      if (err) return done(jsonTooDeep(text) ? tooDeep() : err, undefined);
      if (valueTooDeep(value)) return done(tooDeep(), undefined);
      done(null, value);
    });
  });
}

/** The ValidationFailed message for a request without a body on a route that takes one. */
export function missingBodyMessage(bodySchema: JsonSchema): string {
  const message = "The request has no body: send a JSON object (Content-Type: application/json)";
  // Where every field is optional (leases, PUT /v1/queues/{queue}), say how to send none of them.
  return bodySchema.required === undefined ? `${message}, {} to leave every field at its default.` : `${message}.`;
}
