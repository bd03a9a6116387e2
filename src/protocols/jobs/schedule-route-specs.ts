/** The schedules routes (docs/jobs-api.md, "Schedules"), in the same table form as route-specs.ts. */
import { type RouteSpec, bodyErrors, error, invalid, ref, wrap } from "./route-spec-parts.js";
import { listSchedulesQuery, scheduleBody, scheduleParams } from "./schedule-schemas.js";

const scheduleAnswer = { description: "The schedule, with its next runs.", schema: wrap("schedule", ref("Schedule")) };
const notFound = error("ScheduleNotFound.");

export const scheduleRouteSpecs: RouteSpec[] = [
  {
    operationId: "listSchedules",
    scopes: ["read", "submit", "admin"],
    method: "GET",
    path: "/v1/schedules",
    summary: "List schedules by name.",
    tag: "schedules",
    querystring: listSchedulesQuery,
    responses: {
      "200": {
        description: "A page of schedules.",
        schema: { type: "object", properties: { schedules: { type: "array", items: ref("Schedule") }, nextCursor: { type: ["string", "null"] } }, required: ["schedules", "nextCursor"] },
      },
      "400": invalid("limit or cursor"),
    },
  },
  {
    operationId: "putSchedule",
    scopes: ["submit", "admin"],
    method: "PUT",
    path: "/v1/schedules/{name}",
    summary: "Create or replace a schedule: a cron expression (5 or 6 fields, in a time zone) or an interval that submits one job to a queue per run.",
    tag: "schedules",
    params: scheduleParams,
    body: scheduleBody,
    responses: {
      "201": { ...scheduleAnswer, description: "Created." },
      "200": { ...scheduleAnswer, description: "Replaced (a paused schedule stays paused)." },
      "400": invalid("the name, the cron expression, the time zone, or another field"),
      ...bodyErrors,
      "413": error("MessageTooLong: the input is over 1 MiB of JSON, or the request body over 4 MiB."),
    },
  },
  {
    operationId: "getSchedule",
    scopes: ["read", "submit", "admin"],
    method: "GET",
    path: "/v1/schedules/{name}",
    summary: "A schedule and its next runs.",
    tag: "schedules",
    params: scheduleParams,
    responses: { "200": scheduleAnswer, "400": invalid("the name"), "404": notFound },
  },
  {
    operationId: "deleteSchedule",
    scopes: ["submit", "admin"],
    method: "DELETE",
    path: "/v1/schedules/{name}",
    summary: "Delete a schedule (the jobs it submitted stay).",
    tag: "schedules",
    params: scheduleParams,
    responses: { "204": { description: "Deleted." }, "400": invalid("the name"), "404": notFound },
  },
  {
    operationId: "pauseSchedule",
    scopes: ["submit", "admin"],
    method: "POST",
    path: "/v1/schedules/{name}/pause",
    summary: "Pause: no run submits a job until resumed (runs due meanwhile are skipped).",
    tag: "schedules",
    params: scheduleParams,
    responses: { "200": scheduleAnswer, "400": invalid("the name"), "404": notFound, ...bodyErrors },
  },
  {
    operationId: "resumeSchedule",
    scopes: ["submit", "admin"],
    method: "POST",
    path: "/v1/schedules/{name}/resume",
    summary: "Resume a paused schedule from its next run after now.",
    tag: "schedules",
    params: scheduleParams,
    responses: { "200": scheduleAnswer, "400": invalid("the name"), "404": notFound, ...bodyErrors },
  },
];
