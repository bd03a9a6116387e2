import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Two projects: every test on the default store (SQLite), and the SQS compatibility and jobs
 * end-to-end suites again on PostgreSQL, with the jobs API tests of dependencies, tenants and
 * limits — the same test files, with SLUICE_TEST_STORE=postgres
 * (test/support/test-store.ts). The jobs files that only drive the CLI or the packaging, whatever
 * the store, run once.
 */
// No shutdown drain in tests (servers the tests spawn inherit it); the drain's own test sets one.
const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: "1", SLUICE_SHUTDOWN_DRAIN_SECONDS: "0" };
const workflowJobsFiles = ["dependencies", "labels", "lease-limits", "pipeline-example", "workers"];
// (attachments-s3 files: their two-node cases run on PostgreSQL nodes in either project.)
const storeIndependentJobsE2e = ["attachments-s3", "sdk-attachments-s3", "cli-jobs", "cli-schedules", "cli-worker", "docs-cli-commands", "example-walkthrough", "example-streaming", "example-attachments", "readme-sdk", "sdk-package", "worker-processes"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Most files wait on servers they spawn, on fsync and on sockets rather than on a core, so two
    // files a core keep the machine busy (vitest's default, a core less than the machine, runs one at a time on two cores).
    maxWorkers: availableParallelism() * 2,
    // A PostgreSQL cluster for the run, started only if a test file asks for one (test/support/postgres.ts).
    globalSetup: ["test/postgres-setup.ts"],
    projects: [
      {
        extends: true,
        test: { name: "sqlite", include: ["src/**/*.test.ts", "test/**/*.test.ts", "client/**/*.test.ts"], env: { ...env, SLUICE_TEST_STORE: "sqlite" } },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          // With the jobs files of what PostgreSQL does its own way (dependencies, tenants and limits).
          include: ["test/sqs-compat/**/*.test.ts", "test/smoke/**/*.test.ts", "test/jobs-e2e/**/*.test.ts", ...workflowJobsFiles.map((name) => `test/jobs/${name}.test.ts`)],
          exclude: storeIndependentJobsE2e.map((name) => `test/jobs-e2e/${name}.test.ts`),
          env: { ...env, SLUICE_TEST_STORE: "postgres" },
        },
      },
    ],
  },
});
