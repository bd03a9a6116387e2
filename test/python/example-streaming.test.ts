/**
 * examples/streaming's Python walkthrough replayed from its README, and the two languages' models
 * telling the same story (clients/python/tests/test_example_streaming.py), one vitest test per
 * pytest test: see pytest-suite.ts.
 */
import { pytestSuite } from "./pytest-suite.js";

pytestSuite("examples/streaming (pytest)", ["tests/test_example_streaming.py"]);
