/**
 * AWS Signature Version 4 verification: the received request is signed again with the secret of
 * the access key it names, by @smithy/signature-v4 (the signer the AWS SDKs use), and the two
 * signatures are compared in constant time. Covers the Authorization header and presigned query
 * strings (X-Amz-Signature), session tokens, the x-amz-content-sha256 payload markers
 * (a hash, UNSIGNED-PAYLOAD) and the 15-minute clock-skew window. The region in the credential
 * scope is the client's own (any region signs; the scope only has to be consistent).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";
import type { HttpRequest, QueryParameterBag } from "@smithy/types";
import { type AccessKey, type Credentials, type Principal, principalOf } from "./principal.js";
import { NodeSha256, sha256Hex } from "./sha256.js";

export type SigV4FailureKind =
  /** No Authorization header and no X-Amz-Signature. */
  | "missing"
  /** A signature that doesn't follow the SigV4 form (a part missing, a bad date, a bad algorithm). */
  | "incomplete"
  /** The access key id (or its session token) is not one of ours. */
  | "unknownKey"
  | "badSignature"
  /** A presigned URL past its X-Amz-Expires, or a signature more than 15 minutes off our clock. */
  | "expired";

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
/** The query parameters of a presigned URL that presign() itself writes. */
const presignParams = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"];

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

/** Query parameters decoded (no `+` → space: SigV4 signs %20), repeated names as lists. */
function parseQuery(raw: string): QueryParameterBag | undefined {
  const query: Record<string, string | string[]> = {};
  if (raw.length === 0) return query;
  for (const pair of raw.split("&")) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf("=");
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(eq === -1 ? pair : pair.slice(0, eq));
      value = eq === -1 ? "" : decodeURIComponent(pair.slice(eq + 1));
    } catch {
      return undefined;
    }
    if (key === "__proto__") return undefined;
    const prior = query[key];
    query[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return query;
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
  /** One signer per key: it caches the derived signing keys per day and region. */
  private readonly signers = new WeakMap<AccessKey, SignatureV4>();

  private signerFor(key: AccessKey): SignatureV4 {
    let signer = this.signers.get(key);
    if (!signer) {
      const credentials = { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey.reveal(), sessionToken: key.sessionToken?.reveal() };
      // applyChecksum off: a content hash header is signed only when the client sent one.
      signer = new SignatureV4({ credentials, region: "us-east-1", service, sha256: NodeSha256, applyChecksum: false });
      this.signers.set(key, signer);
    }
    return signer;
  }

  async verify(req: SigV4Request, credentials: Credentials, nowMs: number): Promise<SigV4Result> {
    const q = req.url.indexOf("?");
    const path = q === -1 ? req.url : req.url.slice(0, q);
    const query = parseQuery(q === -1 ? "" : req.url.slice(q + 1));
    if (query === undefined) return fail("incomplete", "The query string has an invalid percent-encoding.");
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
  private signedHeaders(req: SigV4Request, names: string[]): { headers: Record<string, string> } | { absent: string } {
    const headers: Record<string, string> = {};
    for (const name of names) {
      const value = header(req.headers, name);
      if (value === undefined) return { absent: name };
      headers[name] = value;
    }
    return { headers };
  }

  private async verifyHeader(req: SigV4Request, path: string, query: QueryParameterBag, authorization: string, credentials: Credentials, nowMs: number): Promise<SigV4Result> {
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
    const payload = payloadProblem(header(req.headers, "x-amz-content-sha256"), req.body);
    if (payload) return payload;
    const signed = await this.signerFor(key).sign(httpRequest(req, path, query, headers), {
      signingDate: new Date(signedAtMs),
      signingRegion: scope.region,
      signingService: service,
      signableHeaders: new Set(signedNames),
    });
    const expected = /Signature=([0-9a-f]{64})$/.exec(String(signed.headers.authorization))?.[1];
    if (expected === undefined || !sameText(expected, signature)) return mismatch();
    return { ok: true, principal: principalOf(key) };
  }

  private async verifyPresigned(req: SigV4Request, path: string, query: QueryParameterBag, credentials: Credentials, nowMs: number): Promise<SigV4Result> {
    const param = (name: string): string | undefined => {
      const v = query[name];
      return typeof v === "string" ? v : undefined;
    };
    for (const name of presignParams.slice(0, 6)) {
      if (!param(name)) return fail("incomplete", `A presigned URL must carry the query parameter ${name}.`);
    }
    if (param("X-Amz-Algorithm") !== algorithm) return fail("incomplete", `X-Amz-Algorithm must be ${algorithm}.`);
    const scope = parseCredentialScope(param("X-Amz-Credential")!);
    if (typeof scope === "string") return fail("incomplete", scope);
    const signature = param("X-Amz-Signature")!;
    if (!hexSignature.test(signature)) return fail("incomplete", "X-Amz-Signature must be 64 lowercase hexadecimal digits.");
    const signedAtMs = parseAmzDate(param("X-Amz-Date"));
    if (signedAtMs === undefined) return fail("incomplete", "X-Amz-Date must be a date of the form yyyyMMddTHHmmssZ.");
    const expiresText = param("X-Amz-Expires")!;
    const expiresSeconds = /^\d{1,6}$/.test(expiresText) ? Number(expiresText) : 0;
    if (expiresSeconds < 1 || expiresSeconds > presignedExpiresMaxSeconds) return fail("incomplete", `X-Amz-Expires must be 1 to ${presignedExpiresMaxSeconds} seconds.`);
    if (signedAtMs - nowMs > clockSkewMaxMs) return fail("expired", "The presigned URL is dated more than 15 minutes in the future.");
    if (nowMs > signedAtMs + expiresSeconds * 1000) return fail("expired", `Request has expired: the presigned URL was valid until ${new Date(signedAtMs + expiresSeconds * 1000).toISOString()}.`);
    if (param("X-Amz-Date")!.slice(0, 8) !== scope.dateStamp) return fail("badSignature", "Credential should be scoped to the date of X-Amz-Date.");
    const signedNames = param("X-Amz-SignedHeaders")!.split(";");
    if (!signedNames.includes("host")) return fail("incomplete", "X-Amz-SignedHeaders must include host.");
    const key = this.keyFor(scope, credentials, param("X-Amz-Security-Token"));
    if ("ok" in key) return key;
    const signedHeaders = this.signedHeaders(req, signedNames);
    if ("absent" in signedHeaders) return fail("badSignature", `The signed header ${signedHeaders.absent} is not in the request.`);
    const { headers } = signedHeaders;
    const unsigned: Record<string, string | string[] | null> = {};
    for (const [name, value] of Object.entries(query)) if (!presignParams.includes(name)) unsigned[name] = value;
    const presigned = await this.signerFor(key).presign(httpRequest(req, path, unsigned, headers), {
      signingDate: new Date(signedAtMs),
      expiresIn: expiresSeconds,
      signingRegion: scope.region,
      signingService: service,
      signableHeaders: new Set(signedNames),
    });
    const expected = presigned.query?.["X-Amz-Signature"];
    if (typeof expected !== "string" || !sameText(expected, signature)) return mismatch();
    return { ok: true, principal: principalOf(key) };
  }
}

function httpRequest(req: SigV4Request, path: string, query: QueryParameterBag, headers: Record<string, string>): HttpRequest {
  return { method: req.method, protocol: "http:", hostname: headers.host ?? "", path, query, headers, body: req.body.length === 0 ? undefined : req.body };
}

/** A declared payload hash that doesn't match the body, or a payload marker SQS clients never send. */
function payloadProblem(declared: string | undefined, body: Uint8Array): SigV4Result | undefined {
  if (declared === undefined || declared === unsignedPayload) return undefined;
  if (declared.startsWith("STREAMING-")) return fail("incomplete", `x-amz-content-sha256 ${declared.slice(0, 60)}: aws-chunked payloads are not accepted by the SQS API; send the body whole.`);
  if (!hexSignature.test(declared)) return fail("incomplete", "x-amz-content-sha256 must be the body's SHA-256 in hexadecimal, or UNSIGNED-PAYLOAD.");
  if (!sameText(declared, sha256Hex(body))) return fail("badSignature", "The x-amz-content-sha256 header does not match the SHA-256 of the body.");
  return undefined;
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
