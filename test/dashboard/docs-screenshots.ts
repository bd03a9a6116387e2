/** The screenshots docs/ shows, by the name the dashboard test takes them under. */
export const docsScreenshots: Readonly<Record<string, string>> = {
  queues: "docs/dashboard-queues.png",
  "queue-redrive": "docs/dashboard-redrive.png",
  schedules: "docs/dashboard-schedules.png",
};
