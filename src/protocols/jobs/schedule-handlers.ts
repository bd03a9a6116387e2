/** The schedules routes' handlers (schedule-route-specs.ts): core's ScheduleService, answered as JSON. */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AccountSchedules, ScheduleInput, ScheduleView } from "../../core/index.js";
import { isoTime } from "./iso-time.js";

type Request = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown>; Body: unknown }>;
type Handler = (request: Request, reply: FastifyReply) => Promise<unknown>;

/** A schedule as the API answers it (the Schedule schema). */
export function scheduleWire(view: ScheduleView): Record<string, unknown> {
  const s = view.schedule;
  return {
    name: s.name,
    queue: s.queueName,
    cron: s.cron ?? null,
    everySeconds: s.everySeconds ?? null,
    timezone: s.timezone,
    input: JSON.parse(s.inputJson) as unknown,
    options: JSON.parse(s.optionsJson) as unknown,
    catchUp: s.catchUp,
    paused: s.paused,
    nextRuns: view.nextRuns.map(isoTime),
    lastRunAt: s.lastRunAtMs === undefined ? null : isoTime(s.lastRunAtMs),
    lastJobId: s.lastJobId ?? null,
    createdAt: isoTime(s.createdAtMs),
    updatedAt: isoTime(s.updatedAtMs),
  };
}

const answer = (view: ScheduleView): string => JSON.stringify({ schedule: scheduleWire(view) });

/** `schedulesOf`: the schedules a request works on (its account's). */
export function scheduleHandlers(schedulesOf: (request: Request) => AccountSchedules, sendJson: (reply: FastifyReply, status: number, json: string) => FastifyReply): Record<string, Handler> {
  return {
    async listSchedules(request, reply) {
      const schedules = schedulesOf(request);
      const q = request.query as { limit?: number; cursor?: string };
      const page = await schedules.list(q);
      return sendJson(reply, 200, JSON.stringify({ schedules: page.schedules.map(scheduleWire), nextCursor: page.nextCursor ?? null }));
    },
    async putSchedule(request, reply) {
      const schedules = schedulesOf(request);
      const { view, created } = await schedules.put(request.params.name!, request.body as ScheduleInput);
      return sendJson(reply, created ? 201 : 200, answer(view));
    },
    async getSchedule(request, reply) {
      const schedules = schedulesOf(request);
      return sendJson(reply, 200, answer(await schedules.get(request.params.name!)));
    },
    async deleteSchedule(request, reply) {
      const schedules = schedulesOf(request);
      await schedules.delete(request.params.name!);
      return reply.code(204).send();
    },
    async pauseSchedule(request, reply) {
      const schedules = schedulesOf(request);
      return sendJson(reply, 200, answer(await schedules.pause(request.params.name!)));
    },
    async resumeSchedule(request, reply) {
      const schedules = schedulesOf(request);
      return sendJson(reply, 200, answer(await schedules.resume(request.params.name!)));
    },
  };
}
