/**
 * The Python SDK's retry, restart and worker-process tests (clients/python/tests), one vitest test
 * per pytest test: see pytest-suite.ts. A file of its own, so vitest runs it beside the other.
 */
import { pytestSuite } from "./pytest-suite.js";

pytestSuite("Python SDK: retries, restarts, worker processes (pytest)", ["tests/test_retries.py", "tests/test_processes.py"]);
