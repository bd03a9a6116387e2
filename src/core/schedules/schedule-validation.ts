/**
 * Checks of a schedule's definition (core is called in-process too, so it never trusts that an
 * HTTP schema ran): its name, exactly one of cron / everySeconds, the time zone, the input and the
 * job options — which are checked as a submit's, so a schedule never holds a job that a submit
 * would refuse.
 */
import { fail } from "../errors.js";
import { checkJobInput } from "../jobs/job-message.js";
import { checkJobInteger } from "../job-settings.js";
import { normalizeWebhook, validateSubmit } from "../jobs/job-validation.js";
import { limits } from "../limits.js";
import { type CronCompiler, type RunTimes, everySecondsRunTimes } from "./run-times.js";
import { type CatchUp, type ScheduleInput, type ScheduleJobOptions, type ScheduleRecord, catchUpModes, defaultCatchUp } from "./schedule.js";

const namePattern = /^[A-Za-z0-9_-]+$/;

/** What a PUT defines: the record's definition fields. */
export type ScheduleDefinition = Pick<ScheduleRecord, "queueName" | "cron" | "everySeconds" | "timezone" | "inputJson" | "optionsJson" | "catchUp">;

export function checkScheduleName(name: string): void {
  if (typeof name !== "string" || name.length < 1 || name.length > limits.schedules.nameMaxLength || !namePattern.test(name)) {
    fail("ValidationFailed", `Schedule name must be 1–${limits.schedules.nameMaxLength} characters of A–Z, a–z, 0–9, '-' and '_'; got ${JSON.stringify(name)}.`);
  }
}

/** A time zone the runtime knows (IANA names, e.g. Europe/Berlin; UTC). */
export function checkTimezone(timezone: string): void {
  if (typeof timezone !== "string" || timezone.length < 1 || timezone.length > limits.schedules.timezoneMaxLength) {
    fail("ValidationFailed", `timezone must be an IANA time zone name (e.g. Europe/Berlin or UTC) of at most ${limits.schedules.timezoneMaxLength} characters.`);
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    fail("ValidationFailed", `timezone ${JSON.stringify(timezone)} is not a known IANA time zone (e.g. Europe/Berlin, America/New_York, UTC).`);
  }
}

/** The definition as stored, and its run times; throws ValidationFailed (or MessageTooLong for the input). */
export function validateScheduleInput(name: string, input: ScheduleInput, compile: CronCompiler): { definition: ScheduleDefinition; times: RunTimes } {
  checkScheduleName(name);
  if (input === null || typeof input !== "object") fail("ValidationFailed", "The schedule must be a JSON object.");
  const s = limits.schedules;
  if (typeof input.queue !== "string" || input.queue.length === 0) fail("ValidationFailed", "queue is required: the name of the queue each run submits a job to.");
  if (input.queue.endsWith(".fifo")) fail("ValidationFailed", "Job queues are standard queues: a schedule can't submit to a .fifo queue.");
  if (input.queue.length > limits.queueNameMaxLength || !namePattern.test(input.queue)) {
    fail("ValidationFailed", `queue must be 1–${limits.queueNameMaxLength} characters of A–Z, a–z, 0–9, '-' and '_'; got ${JSON.stringify(input.queue)}.`);
  }
  const hasCron = input.cron !== undefined;
  const hasEvery = input.everySeconds !== undefined;
  if (hasCron === hasEvery) fail("ValidationFailed", "Give exactly one of cron (a 5- or 6-field cron expression) and everySeconds.");
  const timezone = input.timezone ?? "UTC";
  checkTimezone(timezone);
  let times: RunTimes;
  if (hasCron) {
    if (typeof input.cron !== "string" || input.cron.trim().length === 0 || input.cron.length > s.cronMaxLength) {
      fail("ValidationFailed", `cron must be a cron expression of at most ${s.cronMaxLength} characters.`);
    }
    times = compile(input.cron, timezone);
  } else {
    checkJobInteger("everySeconds", input.everySeconds!, 1, s.everySecondsMax);
    times = everySecondsRunTimes(input.everySeconds!);
  }
  const catchUp: CatchUp = input.catchUp ?? defaultCatchUp;
  if (!(catchUpModes as readonly string[]).includes(catchUp)) fail("ValidationFailed", `catchUp must be one of ${catchUpModes.join(", ")}; got ${JSON.stringify(catchUp)}.`);
  const options = checkJobOptions(input.options ?? {}, input.input);
  const inputJson = JSON.stringify(input.input);
  checkJobInput(inputJson);
  return {
    definition: {
      queueName: input.queue,
      ...(hasCron ? { cron: input.cron!.trim() } : { everySeconds: input.everySeconds! }),
      timezone,
      inputJson,
      optionsJson: JSON.stringify(options),
      catchUp,
    },
    times,
  };
}

const optionNames = new Set(["priority", "timeoutSeconds", "maxAttempts", "webhook", "metadata", "tenant"]);

/** The options as a submit would take them (webhook normalized); unknown ones refused. */
function checkJobOptions(options: ScheduleJobOptions, input: unknown): ScheduleJobOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options)) fail("ValidationFailed", "options must be a JSON object.");
  for (const key of Object.keys(options)) {
    if (!optionNames.has(key)) fail("ValidationFailed", `options.${key} is not a job option of a schedule; allowed: ${[...optionNames].join(", ")}.`);
  }
  if (input === undefined) fail("ValidationFailed", "input is required (any JSON value): the input of every job the schedule submits.");
  validateSubmit({ ...options, input });
  return options.webhook ? { ...options, webhook: normalizeWebhook(options.webhook) } : options;
}
