/**
 * The Python SDK built into a wheel and an sdist offline, installed into fresh virtual
 * environments outside the repository, the READMEs' Python snippets run from there
 * (clients/python/tests/test_package.py), one vitest test per pytest test: see pytest-suite.ts.
 */
import { pytestSuite } from "./pytest-suite.js";

pytestSuite("the sluice-client Python package (pytest)", ["tests/test_package.py"]);
