/**
 * The fault proxy as a process, for test suites in other languages (the Python SDK's):
 * `node --import tsx test/support/fault-proxy-main.ts <target-url> [port]`. Prints
 * "fault proxy listening on <url>" when ready; SIGTERM closes it.
 */
import { startFaultProxy } from "./fault-proxy.js";

const [target, port] = process.argv.slice(2);
if (!target) {
  console.error("usage: fault-proxy-main.ts <target-url> [port]");
  process.exit(2);
}
const proxy = await startFaultProxy(target, port ? Number(port) : 0);
console.log(`fault proxy listening on ${proxy.url}`);
process.on("SIGTERM", () => void proxy.close().then(() => process.exit(0)));
