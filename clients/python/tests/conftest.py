"""Fixtures: one shared real server for the session, a server of its own for a test that restarts
or kills it, the shared fault proxy, and worker processes that must not outlive their test."""
from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from support import FaultProxy, Process, SluiceServer, spawn_worker  # noqa: E402
from sluice_client import Sluice  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spec(rule): the docs/sdk-wire-spec.md rule this test checks")


def _server(prefix: str) -> Iterator[SluiceServer]:
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    srv = SluiceServer(data_dir).start()
    yield srv
    srv.kill()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def server() -> Iterator[SluiceServer]:
    yield from _server("sluice-py-srv-")


@pytest.fixture
def own_server() -> Iterator[SluiceServer]:
    """A server of the test's own, which it may restart or kill."""
    yield from _server("sluice-py-own-")


@pytest.fixture
def proxy(server: SluiceServer) -> Iterator[FaultProxy]:
    p = FaultProxy(server.url)
    yield p
    p.close()


@pytest.fixture
def proxy_to() -> Iterator[Callable[[str], FaultProxy]]:
    """The fault proxy in front of any server (e.g. own_server, which a test restarts)."""
    made: List[FaultProxy] = []

    def start(target: str) -> FaultProxy:
        made.append(FaultProxy(target))
        return made[-1]

    yield start
    for p in made:
        p.close()


@pytest.fixture
def sluice(server: SluiceServer) -> Sluice:
    return Sluice(server.url)


_counter = itertools.count()


@pytest.fixture
def queue_name(request: pytest.FixtureRequest) -> str:
    """A queue of the test's own (names 1–80 characters of [A-Za-z0-9_-])."""
    base = re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:60]
    return f"py-{base}-{next(_counter)}"


@pytest.fixture
def workers() -> Iterator[Callable[..., Process]]:
    """Starts worker processes; one still running when its test ends is a leak and fails it."""
    started: List[Process] = []

    def start(*args: str, **kwargs: object) -> Process:
        p = spawn_worker(*args, **kwargs)  # type: ignore[arg-type]
        started.append(p)
        return p

    yield start
    leaked = [p for p in started if p.running]
    for p in leaked:
        p.kill()
    assert not leaked, f"worker processes left running: {[p.pid for p in leaked]}"


@pytest.fixture
def tmp_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="sluice-py-test-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


# The repository's `npm test` runs this suite under vitest, one vitest test per pytest test: it
# asks for the outcome of each through this report (JSON lines: nodeid, outcome, the failure's text).
_REPORT = os.environ.get("SLUICE_PYTEST_REPORT")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _REPORT:
        return
    failed = report.outcome == "failed"
    if report.when == "call" or failed or report.outcome == "skipped":
        with open(_REPORT, "a") as f:
            outcome = f"{report.when} {report.outcome}" if report.when != "call" else report.outcome
            f.write(json.dumps({"nodeid": report.nodeid, "outcome": outcome, "text": report.longreprtext if failed or report.skipped else ""}) + "\n")
