/**
 * examples/attachments' Python walkthrough replayed from its README, and the two languages' edge
 * detectors giving the same bytes (clients/python/tests/test_example_attachments.py), one vitest
 * test per pytest test: see pytest-suite.ts.
 */
import { pytestSuite } from "./pytest-suite.js";

pytestSuite("examples/attachments (pytest)", ["tests/test_example_attachments.py"]);
