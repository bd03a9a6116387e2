/** A real HTTP receiver of webhook deliveries on 127.0.0.1, recording each (headers and body). */
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Receiver {
  url: string;
  received: Array<{ headers: IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

export type Answer = number | "hang" | { status: number; headers: Record<string, string> };

/** Answers each delivery with the next of `statuses` (the last one repeats); "hang" never answers. */
export async function startReceiver(statuses: Answer[] = [200]): Promise<Receiver> {
  const received: Receiver["received"] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      const answer = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      if (answer === "hang") return;
      if (typeof answer === "number") res.statusCode = answer;
      else res.writeHead(answer.status, answer.headers);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/sluice`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
