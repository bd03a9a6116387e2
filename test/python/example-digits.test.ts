/**
 * examples/python-digits' walkthrough replayed from its README, and its batch worker
 * (clients/python/tests/test_example_digits.py), one vitest test per pytest test: see pytest-suite.ts.
 */
import { pytestSuite } from "./pytest-suite.js";

pytestSuite("examples/python-digits (pytest)", ["tests/test_example_digits.py"]);
