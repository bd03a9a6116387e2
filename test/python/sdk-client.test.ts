/**
 * The Python SDK's client, worker and asyncio tests (clients/python/tests), one vitest test per
 * pytest test: see pytest-suite.ts.
 */
import { pytestSuite } from "./pytest-suite.js";

pytestSuite("Python SDK: client, worker, asyncio (pytest)", ["tests/test_client.py", "tests/test_worker.py", "tests/test_async.py", "tests/test_streaming.py", "tests/test_attachments.py", "tests/test_tracing.py", "tests/test_compat.py", "tests/test_workflows.py", "tests/test_accounts.py", "tests/test_imports.py", "tests/test_labels.py"]);
