/**
 * The SigV4 canonical request of a received request, built by @smithy/signature-v4 — the code the
 * AWS SDKs sign with — so the server canonicalizes paths, queries and headers exactly as clients
 * do. Only the canonicalization is taken from it: hashing and HMACs are done by the caller,
 * synchronously (the signer's own sign() awaits every digest and clones the request).
 */
import { SignatureV4Base, getCanonicalHeaders } from "@smithy/signature-v4";
import type { HeaderBag, HttpRequest, QueryParameterBag } from "@smithy/types";
import { NodeSha256 } from "./sha256.js";

/** SignatureV4Base keeps createCanonicalRequest protected: this subclass only opens it. */
class CanonicalRequestBuilder extends SignatureV4Base {
  constructor() {
    // Credentials and region are never used: this builder signs nothing.
    super({ credentials: { accessKeyId: "", secretAccessKey: "" }, region: "", service: "sqs", sha256: NodeSha256 });
  }

  build(request: HttpRequest, canonicalHeaders: HeaderBag, payloadHash: string): string {
    return this.createCanonicalRequest(request, canonicalHeaders, payloadHash);
  }
}

const builder = new CanonicalRequestBuilder();

export interface ReceivedRequest {
  method: string;
  /** The path as received (percent-encoded): SigV4 encodes it once more, as the signer did. */
  path: string;
  /** Decoded query parameters; X-Amz-Signature, if present, is left out of the canonical query. */
  query: QueryParameterBag;
  /** The signed headers only, by lower-case name, as received. */
  headers: Record<string, string>;
  signedHeaderNames: Set<string>;
  payloadHash: string;
}

export function canonicalRequest(r: ReceivedRequest): string {
  const request: HttpRequest = { method: r.method, protocol: "http:", hostname: r.headers.host ?? "", path: r.path, query: r.query, headers: r.headers };
  // Every signed header counts, even one the signer would never sign on its own (user-agent, …).
  return builder.build(request, getCanonicalHeaders(request, undefined, r.signedHeaderNames), r.payloadHash);
}
