/**
 * AWS Signature Version 4 verification: the received request is signed again with the secret of
 * the access key it names and the two signatures are compared in constant time. The canonical
 * request is @smithy/signature-v4's (the signer the AWS SDKs use: its path, query and header
 * canonicalization, canonical-request.ts); the hashing around it is synchronous node:crypto, with
 * the derived signing key cached per key, date and region. Covers the Authorization header and
 * presigned query strings (X-Amz-Signature), session tokens, the x-amz-content-sha256 payload
 * markers (a hash, UNSIGNED-PAYLOAD) and the 15-minute clock-skew window. The region in the
 * credential scope is the client's own (any region signs; the scope only has to be consistent).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { QueryParameterBag } from "@smithy/types";
import { type ReceivedRequest, canonicalRequest } from "./canonical-request.js";
import { type AccessKey, type Credentials, type Principal, principalOf } from "./principal.js";
import { sha256Hex } from "./sha256.js";
import { SigningKeys, hmacHex } from "./signing-keys.js";

export type SigV4FailureKind =
  /** No Authorization header and no X-Amz-Signature. */
  | "missing"
  /** A signature that doesn't follow the SigV4 form (a part missing, a bad date, a bad algorithm). */
  | "incomplete"
  /** The access key id (or its session token) is not one of ours. */
  | "unknownKey"
  | "badSignature"
  /** A presigned URL past its X-Amz-Expires, or a signature more than 15 minutes off our clock. */
  | "expired"
  /** A query string with an invalid percent-escape: nothing can be read from it, signed or not (SQS: MalformedQueryString). */
  | "malformedQuery";

export interface SigV4Failure {
  kind: SigV4FailureKind;
  message: string;
}

export type SigV4Result = { ok: true; principal: Principal } | { ok: false; failure: SigV4Failure };

export interface SigV4Request {
  method: string;
  /** Path and query string as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Uint8Array;
}

/** SigV4's own bounds: signatures within 15 minutes of our clock, presigned URLs for up to 7 days. */
export const clockSkewMaxMs = 15 * 60_000;
const presignedExpiresMaxSeconds = 7 * 86_400;
const service = "sqs";
const algorithm = "AWS4-HMAC-SHA256";
const unsignedPayload = "UNSIGNED-PAYLOAD";
const amzDatePattern = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const hexSignature = /^[0-9a-f]{64}$/;
/** The query parameters every presigned URL carries. */
const presignParams = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"];

const fail = (kind: SigV4FailureKind, message: string): SigV4Result => ({ ok: false, failure: { kind, message } });

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(",") : v;
}

function parseAmzDate(text: string | undefined): number | undefined {
  const m = text === undefined ? null : amzDatePattern.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Query parameters decoded (no `+` → space: SigV4 signs %20), repeated names as lists;
 * or the failure that stops it: an invalid percent-escape (with the part that holds it), or a
 * `__proto__` parameter.
 */
function parseQuery(raw: string): { query: QueryParameterBag } | { failure: SigV4Result } {
  const query: Record<string, string | string[]> = {};
  if (raw.length === 0) return { query };
  for (const pair of raw.split("&")) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf("=");
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(eq === -1 ? pair : pair.slice(0, eq));
      value = eq === -1 ? "" : decodeURIComponent(pair.slice(eq + 1));
    } catch {
      // It can't be canonicalized: a syntax error, whoever signed it.
      return { failure: fail("malformedQuery", `The query string contains an invalid percent-encoding: ${pair.slice(0, 100)}`) };
    }
    if (key === "__proto__") return { failure: fail("incomplete", "The query string names a parameter __proto__.") };
    const prior = query[key];
    query[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return { query };
}

interface Scope {
  accessKeyId: string;
  dateStamp: string;
  region: string;
}

function parseCredentialScope(credential: string): Scope | string {
  const parts = credential.split("/");
  if (parts.length !== 5) return `Credential must have the form <access key id>/<date>/<region>/${service}/aws4_request, got "${credential.slice(0, 200)}".`;
  const [accessKeyId, dateStamp, region, scopeService, terminator] = parts as [string, string, string, string, string];
  if (!/^\d{8}$/.test(dateStamp)) return `Credential's date must be yyyyMMdd, got "${dateStamp.slice(0, 20)}".`;
  if (scopeService !== service) return `Credential should be scoped to the service '${service}', not '${scopeService.slice(0, 40)}'.`;
  if (terminator !== "aws4_request") return "Credential should be scoped with a valid terminator: 'aws4_request'.";
  if (accessKeyId.length === 0 || region.length === 0) return "Credential names no access key id or no region.";
  return { accessKeyId, dateStamp, region };
}

export class SigV4Verifier {
  private readonly signingKeys = new SigningKeys(service);

  verify(req: SigV4Request, credentials: Credentials, nowMs: number): SigV4Result {
    const q = req.url.indexOf("?");
    const path = q === -1 ? req.url : req.url.slice(0, q);
    const parsed = parseQuery(q === -1 ? "" : req.url.slice(q + 1));
    if ("failure" in parsed) return parsed.failure;
    const { query } = parsed;
    const authorization = header(req.headers, "authorization");
    if (authorization !== undefined) return this.verifyHeader(req, path, query, authorization, credentials, nowMs);
    if (query["X-Amz-Signature"] !== undefined || query["X-Amz-Algorithm"] !== undefined || query["X-Amz-Credential"] !== undefined) {
      return this.verifyPresigned(req, path, query, credentials, nowMs);
    }
    return fail("missing", "The request is not signed: it must carry an AWS Signature Version 4 (an Authorization header or a presigned URL) made with one of this server's access keys.");
  }

  private keyFor(scope: Scope, credentials: Credentials, sessionToken: string | undefined): AccessKey | SigV4Result {
    const key = credentials.accessKeys.get(scope.accessKeyId);
    if (!key) return fail("unknownKey", "The security token included in the request is invalid: the access key id is not known to this server.");
    const expected = key.sessionToken?.reveal();
    if ((expected === undefined) !== (sessionToken === undefined) || (expected !== undefined && !sameText(expected, sessionToken!))) {
      return fail("unknownKey", "The security token included in the request is invalid: the session token does not match this access key's.");
    }
    return key;
  }

  /** The signed headers, from the request as received; the name of one that is absent, if any. */
  private signedHeaders(req: SigV4Request, names: readonly string[]): { headers: Record<string, string> } | { absent: string } {
    const headers: Record<string, string> = {};
    for (const name of names) {
      const value = header(req.headers, name);
      if (value === undefined) return { absent: name };
      headers[name] = value;
    }
    return { headers };
  }

  /**
   * The signature the request should carry: HMAC of the string to sign (algorithm, date, scope and
   * the canonical request's hash) under the key's signing key for that day and region.
   */
  private expectedSignature(key: AccessKey, scope: Scope, amzDate: string, request: ReceivedRequest): string {
    const stringToSign = `${algorithm}\n${amzDate}\n${scope.dateStamp}/${scope.region}/${service}/aws4_request\n${sha256Hex(canonicalRequest(request))}`;
    return hmacHex(this.signingKeys.get(key, scope.dateStamp, scope.region), stringToSign);
  }

  private verifyHeader(req: SigV4Request, path: string, query: QueryParameterBag, authorization: string, credentials: Credentials, nowMs: number): SigV4Result {
    const space = authorization.indexOf(" ");
    if (space === -1 || authorization.slice(0, space) !== algorithm) {
      return fail("incomplete", `Authorization header must use the ${algorithm} algorithm (AWS Signature Version 4).`);
    }
    const parts = new Map<string, string>();
    for (const part of authorization.slice(space + 1).split(",")) {
      const eq = part.indexOf("=");
      if (eq !== -1) parts.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    for (const name of ["Credential", "SignedHeaders", "Signature"]) {
      if (!parts.get(name)) return fail("incomplete", `Authorization header requires '${name}' parameter.`);
    }
    const scope = parseCredentialScope(parts.get("Credential")!);
    if (typeof scope === "string") return fail("incomplete", scope);
    const signature = parts.get("Signature")!;
    if (!hexSignature.test(signature)) return fail("incomplete", "Signature must be 64 lowercase hexadecimal digits.");
    const signedNames = parts.get("SignedHeaders")!.split(";");
    if (!signedNames.includes("host")) return fail("incomplete", "SignedHeaders must include host.");
    if (!signedNames.includes("x-amz-date")) return fail("incomplete", "The request must carry a signed X-Amz-Date header.");
    const amzDate = header(req.headers, "x-amz-date");
    const signedAtMs = parseAmzDate(amzDate);
    if (signedAtMs === undefined) return fail("incomplete", "X-Amz-Date must be a date of the form yyyyMMddTHHmmssZ.");
    if (Math.abs(signedAtMs - nowMs) > clockSkewMaxMs) {
      return fail("expired", `Signature expired: ${amzDate} is more than 15 minutes from the server's time (${isoBasic(nowMs)}).`);
    }
    if (amzDate!.slice(0, 8) !== scope.dateStamp) return fail("badSignature", "Credential should be scoped to the date of X-Amz-Date.");
    const key = this.keyFor(scope, credentials, header(req.headers, "x-amz-security-token"));
    if ("ok" in key) return key;
    const signedHeaders = this.signedHeaders(req, signedNames);
    if ("absent" in signedHeaders) return fail("badSignature", `The signed header ${signedHeaders.absent} is not in the request.`);
    const { headers } = signedHeaders;
    const payload = payloadHashOf(header(req.headers, "x-amz-content-sha256"), headers["x-amz-content-sha256"], req.body);
    if (typeof payload !== "string") return payload;
    const request: ReceivedRequest = { method: req.method, path, query, headers, signedHeaderNames: new Set(signedNames), payloadHash: payload };
    if (!sameText(this.expectedSignature(key, scope, amzDate!, request), signature)) return mismatch();
    return { ok: true, principal: principalOf(key) };
  }

  private verifyPresigned(req: SigV4Request, path: string, query: QueryParameterBag, credentials: Credentials, nowMs: number): SigV4Result {
    const param = (name: string): string | undefined => {
      const v = query[name];
      return typeof v === "string" ? v : undefined;
    };
    for (const name of presignParams) {
      if (!param(name)) return fail("incomplete", `A presigned URL must carry the query parameter ${name}.`);
    }
    if (param("X-Amz-Algorithm") !== algorithm) return fail("incomplete", `X-Amz-Algorithm must be ${algorithm}.`);
    const scope = parseCredentialScope(param("X-Amz-Credential")!);
    if (typeof scope === "string") return fail("incomplete", scope);
    const signature = param("X-Amz-Signature")!;
    if (!hexSignature.test(signature)) return fail("incomplete", "X-Amz-Signature must be 64 lowercase hexadecimal digits.");
    const amzDate = param("X-Amz-Date")!;
    const signedAtMs = parseAmzDate(amzDate);
    if (signedAtMs === undefined) return fail("incomplete", "X-Amz-Date must be a date of the form yyyyMMddTHHmmssZ.");
    const expiresText = param("X-Amz-Expires")!;
    const expiresSeconds = /^\d{1,6}$/.test(expiresText) ? Number(expiresText) : 0;
    if (expiresSeconds < 1 || expiresSeconds > presignedExpiresMaxSeconds) return fail("incomplete", `X-Amz-Expires must be 1 to ${presignedExpiresMaxSeconds} seconds.`);
    if (signedAtMs - nowMs > clockSkewMaxMs) return fail("expired", "The presigned URL is dated more than 15 minutes in the future.");
    if (nowMs > signedAtMs + expiresSeconds * 1000) return fail("expired", `Request has expired: the presigned URL was valid until ${new Date(signedAtMs + expiresSeconds * 1000).toISOString()}.`);
    if (amzDate.slice(0, 8) !== scope.dateStamp) return fail("badSignature", "Credential should be scoped to the date of X-Amz-Date.");
    const signedNames = param("X-Amz-SignedHeaders")!.split(";");
    if (!signedNames.includes("host")) return fail("incomplete", "X-Amz-SignedHeaders must include host.");
    const key = this.keyFor(scope, credentials, param("X-Amz-Security-Token"));
    if ("ok" in key) return key;
    const signedHeaders = this.signedHeaders(req, signedNames);
    if ("absent" in signedHeaders) return fail("badSignature", `The signed header ${signedHeaders.absent} is not in the request.`);
    const { headers } = signedHeaders;
    const payload = payloadHashOf(header(req.headers, "x-amz-content-sha256"), headers["x-amz-content-sha256"], req.body);
    if (typeof payload !== "string") return payload;
    // The canonical query is the received one without X-Amz-Signature (the canonicalization drops it).
    const request: ReceivedRequest = { method: req.method, path, query, headers, signedHeaderNames: new Set(signedNames), payloadHash: payload };
    if (!sameText(this.expectedSignature(key, scope, amzDate, request), signature)) return mismatch();
    return { ok: true, principal: principalOf(key) };
  }
}

/** The SHA-256 of an empty body: no body to hash. */
const emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/**
 * The payload hash the signature covers: a signed x-amz-content-sha256 as sent, else the body's
 * own. A declared hash (signed or not) that doesn't match the body, or a payload marker SQS clients
 * never send, is refused.
 */
function payloadHashOf(declared: string | undefined, signedDeclared: string | undefined, body: Uint8Array): string | SigV4Result {
  if (declared !== undefined && declared !== unsignedPayload) {
    if (declared.startsWith("STREAMING-")) return fail("incomplete", `x-amz-content-sha256 ${declared.slice(0, 60)}: aws-chunked payloads are not accepted by the SQS API; send the body whole.`);
    if (!hexSignature.test(declared)) return fail("incomplete", "x-amz-content-sha256 must be the body's SHA-256 in hexadecimal, or UNSIGNED-PAYLOAD.");
    // Hashed once: when the header is signed, the signature covers this very value.
    const actual = body.length === 0 ? emptyBodyHash : sha256Hex(body);
    if (!sameText(declared, actual)) return fail("badSignature", "The x-amz-content-sha256 header does not match the SHA-256 of the body.");
    return signedDeclared ?? actual;
  }
  if (signedDeclared !== undefined) return signedDeclared;
  return body.length === 0 ? emptyBodyHash : sha256Hex(body);
}

function mismatch(): SigV4Result {
  return fail("badSignature", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.");
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function isoBasic(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z");
}
