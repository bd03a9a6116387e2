/**
 * The schedules routes' JSON Schemas (request validation and /openapi.json). What a schema can't
 * say clearly — exactly one of cron and everySeconds, a cron expression's fields, a time zone's
 * name — core checks with a specific message.
 */
import { catchUpModes, limits } from "../../core/index.js";
import { type JsonSchema, anyJson, dateTime, int, nullable, object, queueName, submitBody } from "./schemas.js";

const sc = limits.schedules;
const scheduleName: JsonSchema = { type: "string", minLength: 1, maxLength: sc.nameMaxLength, pattern: "^[A-Za-z0-9_-]+$", description: "Schedule name: 1–80 of A–Z a–z 0–9 - _." };

export const scheduleParams = object({ name: scheduleName }, ["name"]);

const submitProperties = submitBody.properties as Record<string, JsonSchema>;
const jobOptionNames = ["priority", "timeoutSeconds", "maxAttempts", "webhook", "metadata", "tenant"] as const;
export const scheduleJobOptions = object(
  Object.fromEntries(jobOptionNames.map((n) => [n, submitProperties[n]!])),
  [],
  { description: "Each job's submit options (as POST /v1/queues/{queue}/jobs takes them)." },
);

export const scheduleBody = object(
  {
    queue: { ...queueName, description: "The queue each run submits a job to (created on first use, as a submit does)." },
    cron: { type: "string", minLength: 1, maxLength: sc.cronMaxLength, description: "5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; read in `timezone`. Give this or everySeconds." },
    everySeconds: int(1, sc.everySecondsMax, "Run every this many seconds, aligned to the Unix epoch (3600: on the hour, UTC). Give this or cron."),
    timezone: { type: "string", minLength: 1, maxLength: sc.timezoneMaxLength, description: "IANA time zone of the cron expression (default UTC); runs follow its DST changes." },
    input: { ...anyJson, description: "Every job's input: any JSON value, at most 1 MiB serialized." },
    options: scheduleJobOptions,
    catchUp: { type: "string", enum: [...catchUpModes], description: "Runs missed while no server ran (over 60 s late): none skips them, latest (default) creates the latest one, all creates each (at most 100, the latest)." },
  },
  ["queue", "input"],
);

export const listSchedulesQuery: JsonSchema = {
  type: "object",
  properties: {
    limit: int(1, sc.listMax, `Default ${sc.listDefault}.`),
    cursor: { ...scheduleName, description: "nextCursor of the previous page." },
  },
};

export const scheduleSchema = object(
  {
    name: { type: "string" },
    queue: { type: "string" },
    cron: nullable({ type: "string" }),
    everySeconds: nullable({ type: "integer" }),
    timezone: { type: "string" },
    input: anyJson,
    options: { type: "object" },
    catchUp: { type: "string", enum: [...catchUpModes] },
    paused: { type: "boolean" },
    nextRuns: { type: "array", items: dateTime, description: `The next ${sc.nextRunsShown} runs (the first may be due now); empty while paused.` },
    lastRunAt: { ...nullable(dateTime), description: "The latest run a job was submitted for." },
    lastJobId: { ...nullable({ type: "string" }), description: "That run's job (the one its idempotency key schedule:<name>:<run time> names); null before the first run." },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
  ["name", "queue", "cron", "everySeconds", "timezone", "input", "options", "catchUp", "paused", "nextRuns", "lastRunAt", "lastJobId", "createdAt", "updatedAt"],
);
