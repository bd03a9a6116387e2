/**
 * amqplib, loaded at run time: the type surface the RabbitMQ rows use is declared here, so the
 * project type-checks in a checkout whose node_modules predates the devDependency, and a bench run
 * there installs it (`npm install --no-save`) as bench/redis.ts does for ioredis.
 */
import { runCommand } from "./procs.js";

export interface AmqpMessage {
  content: Buffer;
}

export interface AmqpChannel {
  assertQueue(queue: string, options: { durable: boolean; arguments: Record<string, string> }): Promise<unknown>;
  checkQueue(queue: string): Promise<{ messageCount: number }>;
  prefetch(count: number): Promise<unknown>;
  consume(queue: string, onMessage: (msg: AmqpMessage | null) => void, options: { noAck: boolean }): Promise<{ consumerTag: string }>;
  get(queue: string, options: { noAck: boolean }): Promise<AmqpMessage | false>;
  ack(message: AmqpMessage, allUpTo?: boolean): void;
  sendToQueue(queue: string, content: Buffer, options: { persistent: boolean }): boolean;
  cancel(consumerTag: string): Promise<unknown>;
  close(): Promise<void>;
  on(event: "error", listener: (err: Error) => void): unknown;
}

export interface AmqpConfirmChannel extends AmqpChannel {
  waitForConfirms(): Promise<void>;
}

export interface AmqpConnection {
  createChannel(): Promise<AmqpChannel>;
  createConfirmChannel(): Promise<AmqpConfirmChannel>;
  close(): Promise<void>;
}

interface Amqplib {
  connect(url: string, socketOptions: { noDelay: boolean }): Promise<AmqpConnection>;
}

let loaded: Amqplib | undefined;

export async function loadAmqplib(repoRoot: string, log: (line: string) => void): Promise<Amqplib> {
  if (loaded !== undefined) return loaded;
  // Probed in a child: a failed resolution here would be remembered by this process.
  if ((await runCommand(process.execPath, ["-e", 'require.resolve("amqplib")'], { cwd: repoRoot })).code !== 0) {
    log("amqplib is not installed: npm install --no-save amqplib@2 …");
    const res = await runCommand("npm", ["install", "--no-save", "--no-audit", "--no-fund", "amqplib@2"], { cwd: repoRoot });
    if (res.code !== 0) throw new Error(`npm install amqplib failed:\n${res.output.slice(-2000)}`);
  }
  const specifier: string = "amqplib";
  const mod = (await import(specifier)) as Partial<Amqplib> & { default?: Amqplib };
  const lib = typeof mod.connect === "function" ? (mod as Amqplib) : mod.default;
  if (lib === undefined) throw new Error("amqplib loaded without a connect() export");
  loaded = lib;
  return lib;
}
