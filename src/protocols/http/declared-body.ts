/** Whether a request announced a body, read or not (Content-Length above 0, or chunked). */
import type { IncomingHttpHeaders } from "node:http";

export function declaresBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
}
