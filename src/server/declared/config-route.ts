/**
 * GET /v1/config (admin scope, the server's own account): the running state as a declarative
 * config document, in JSON (config-export.ts); `sluice config export` writes it as a file.
 */
import type { FastifyInstance } from "fastify";
import type { JobService, QueueService, ScheduleService } from "../../core/index.js";
import { exportDeclaredConfig } from "./config-export.js";

export function registerConfigRoute(app: FastifyInstance, services: { queues: QueueService; jobs: JobService; schedules: ScheduleService }): void {
  app.get("/v1/config", { config: { scope: "admin" } }, async (_request, reply) => {
    return reply.type("application/json; charset=utf-8").send(JSON.stringify(await exportDeclaredConfig(services)));
  });
}
