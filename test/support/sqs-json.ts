/** One SQS JSON-protocol request by hand (no SDK): for tests that drive a server to look at something else. */
export async function sqsRequest(url: string, action: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}/`, {
    method: "POST",
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** The same, failing on any error answer. */
export async function sqsOk(url: string, action: string, body: unknown): Promise<Record<string, unknown>> {
  const { status, json } = await sqsRequest(url, action, body);
  if (status !== 200) throw new Error(`${action}: ${JSON.stringify(json)}`);
  return json;
}
