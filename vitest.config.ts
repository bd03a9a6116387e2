import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "client/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // A PostgreSQL cluster for the run, started only if a test file asks for one (test/support/postgres.ts).
    globalSetup: ["test/postgres-setup.ts"],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: "1" },
  },
});
