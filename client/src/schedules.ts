/**
 * `sluice.schedules`: jobs submitted on a cron expression or an interval (PUT /v1/schedules/{name}).
 */
import type { ClientContext } from "./jobs.js";
import { pathSegment } from "./paths.js";
import type { JsonValue, Schedule, ScheduleSpec } from "./wire.js";

export interface SchedulePage {
  schedules: Schedule[];
  /** Pass back as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

const schedulePath = (name: string): string => `/v1/schedules/${pathSegment(name)}`;

export class SchedulesClient {
  constructor(private readonly ctx: ClientContext) {}

  /** Creates or replaces the schedule (a paused one stays paused); answers it with its next runs. */
  async put<I = JsonValue>(name: string, spec: ScheduleSpec<I>): Promise<Schedule<I>> {
    // A PUT of the whole definition is safe to repeat.
    const res = await this.ctx.http.request<{ schedule: Schedule<I> }>("PUT", schedulePath(name), { body: spec, maxAttempts: this.ctx.attempts });
    return res.body.schedule;
  }

  async get<I = JsonValue>(name: string): Promise<Schedule<I>> {
    const res = await this.ctx.http.request<{ schedule: Schedule<I> }>("GET", schedulePath(name), { maxAttempts: this.ctx.attempts });
    return res.body.schedule;
  }

  async list(opts: { limit?: number; cursor?: string } = {}): Promise<SchedulePage> {
    const res = await this.ctx.http.request<SchedulePage>("GET", "/v1/schedules", { query: { limit: opts.limit, cursor: opts.cursor }, maxAttempts: this.ctx.attempts });
    return { schedules: res.body.schedules, nextCursor: res.body.nextCursor ?? null };
  }

  /** Deletes it (the jobs it submitted stay). Sent once: a resent delete would answer 404 for its own success. */
  async delete(name: string): Promise<void> {
    await this.ctx.http.request("DELETE", schedulePath(name), { maxAttempts: 1 });
  }

  async pause(name: string): Promise<Schedule> {
    return (await this.ctx.http.request<{ schedule: Schedule }>("POST", `${schedulePath(name)}/pause`, { maxAttempts: this.ctx.attempts })).body.schedule;
  }

  async resume(name: string): Promise<Schedule> {
    return (await this.ctx.http.request<{ schedule: Schedule }>("POST", `${schedulePath(name)}/resume`, { maxAttempts: this.ctx.attempts })).body.schedule;
  }
}
