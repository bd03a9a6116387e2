/**
 * The server's logger: pino, JSON lines by default (what log shippers read), human-readable when
 * stdout is a terminal. Made once in the composition root and passed down; nothing else logs.
 * Lines never carry request bodies, URLs (SQS query requests put bodies and signatures in them),
 * headers or secrets: callers log named fields only, and the paths below are censored anyway.
 */
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger } from "pino";

export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof logLevels)[number];

export function isLogLevel(text: string): text is LogLevel {
  return (logLevels as readonly string[]).includes(text);
}

/** Fields that must never reach a log line whatever a caller passes (defence in depth). */
const censoredPaths = [
  "authorization",
  "*.authorization",
  "headers",
  "*.headers",
  "body",
  "*.body",
  "token",
  "*.token",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "webhookSecret",
  "*.webhookSecret",
  "postgresUrl",
  "*.postgresUrl",
];

export interface LoggerOptions {
  level: LogLevel;
  /** Human-readable lines instead of JSON; default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go; default stdout. */
  destination?: DestinationStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  const usePretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  const destination = usePretty
    ? pretty({ destination: opts.destination ?? 1, sync: true, colorize: opts.destination === undefined, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" })
    : opts.destination;
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      // ISO times and level names: what Loki, Elasticsearch and journald queries expect to read.
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: censoredPaths, censor: "[redacted]" },
    },
    destination,
  );
}
