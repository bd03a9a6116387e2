"""Python worker processes (``python -m sluice_client worker``) against a real server: kill -9
mid-job → the job is retried elsewhere; SIGTERM drains and exits 0; the CLI's usage errors."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from sluice_client import Sluice
from support import FIXTURES, Process, SluiceServer, queue_stats, read_log, wait_until, worker_env


@pytest.mark.spec("kill-9")
def test_a_worker_killed_with_sigkill_mid_job_has_its_job_retried_after_the_lease(
    server: SluiceServer, sluice: Sluice, queue_name: str, workers: Callable[..., Process], tmp_dir: Path
) -> None:
    log = tmp_dir / "hold.log"
    env = {"SLUICE_TEST_LOG": str(log)}
    first = workers(server.url, "handlers:hold", queue_name, "--lease-seconds", "2", env=env)
    job = sluice.queue(queue_name).submit({"hold_on_attempts": [1]}, max_attempts=3)
    wait_until(lambda: any(e["event"] == "started" and e["pid"] == first.pid for e in read_log(log)), what="the first worker to start the job")
    assert job.refresh().status == "running"
    first.proc.kill()
    assert first.wait() == -signal.SIGKILL

    second = workers(server.url, "handlers:hold", queue_name, "--lease-seconds", "2", env=env)
    done = job.wait(timeout=30)
    assert (done.status, done.attempt, done.output) == ("succeeded", 2, {"pid": second.pid, "attempt": 2})
    events = [f"{e['event']}@{e['attempt']}:{'first' if e['pid'] == first.pid else 'second'}" for e in read_log(log)]
    assert events == ["started@1:first", "started@2:second", "finished@2:second"]
    second.signal(signal.SIGTERM)
    assert second.wait() == 0


@pytest.mark.spec("drain")
def test_sigterm_drains_finishes_the_running_job_leases_no_more_and_exits_0(
    server: SluiceServer, sluice: Sluice, queue_name: str, workers: Callable[..., Process], tmp_dir: Path
) -> None:
    log = tmp_dir / "slow.log"
    worker = workers(server.url, "handlers:slow", queue_name, env={"SLUICE_TEST_LOG": str(log)})
    q = sluice.queue(queue_name)
    running = q.submit({"seconds": 1.5})
    wait_until(lambda: read_log(log), what="the job to start")
    worker.signal(signal.SIGTERM)
    later = q.submit({"seconds": 0})
    assert worker.wait(30) == 0
    assert running.refresh().status == "succeeded"
    assert later.refresh().status == "queued"
    assert "draining 1 running job(s)" in worker.stderr() and '"completed": 1' in worker.stderr()


@pytest.mark.spec("drain")
def test_sigint_drains_too_and_a_second_signal_exits_1_at_once(
    server: SluiceServer, sluice: Sluice, queue_name: str, workers: Callable[..., Process], tmp_dir: Path
) -> None:
    log = tmp_dir / "slow.log"
    worker = workers(server.url, "handlers:slow", queue_name, env={"SLUICE_TEST_LOG": str(log)})
    job = sluice.queue(queue_name).submit({"seconds": 30}, max_attempts=2)
    wait_until(lambda: read_log(log), what="the job to start")
    worker.signal(signal.SIGINT)
    wait_until(lambda: "draining" in worker.stderr(), what="the drain to begin")
    started = time.monotonic()
    worker.signal(signal.SIGTERM)
    assert worker.wait(30) == 1
    assert time.monotonic() - started < 10
    assert "again, exiting without draining" in worker.stderr()
    assert job.refresh().status == "running"  # its lease runs out; then it is retried


def test_a_batch_worker_process_fails_items_one_by_one(server: SluiceServer, sluice: Sluice, queue_name: str, workers: Callable[..., Process]) -> None:
    worker = workers(server.url, "handlers:square_batch", queue_name, "--batch-size", "4", "--batch-window-ms", "50")
    q = sluice.queue(queue_name)
    jobs = [q.submit({"n": n}, max_attempts=1) for n in (3, -1, 4)]
    done = [j.wait(timeout=20) for j in jobs]
    assert [(j.status, j.output) for j in done] == [("succeeded", 9), ("failed", None), ("succeeded", 16)]
    assert "batches of ≤ 4 within 50 ms" in worker.stdout()
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0


def test_a_thousand_jobs_across_three_worker_processes_each_succeed_exactly_once(
    server: SluiceServer, sluice: Sluice, queue_name: str, workers: Callable[..., Process], tmp_dir: Path
) -> None:
    log = tmp_dir / "record.log"
    procs = [workers(server.url, "handlers:record", queue_name, "--concurrency", "8", env={"SLUICE_TEST_LOG": str(log)}) for _ in range(3)]
    q = sluice.queue(queue_name)
    ids = [q.submit({"n": n}).id for n in range(1000)]
    wait_until(lambda: queue_stats(server.url, queue_name)["succeeded"] == 1000, timeout=60, what="1000 succeeded jobs", interval=0.2)
    for p in procs:
        p.signal(signal.SIGTERM)
    assert [p.wait() for p in procs] == [0, 0, 0]
    entries = read_log(log)
    assert sorted(e["job_id"] for e in entries) == sorted(ids)
    assert all(e["attempt"] == 1 for e in entries)
    assert len({e["pid"] for e in entries}) >= 2


def run_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sluice_client", *args], cwd=str(FIXTURES), env=worker_env(), capture_output=True, text=True, timeout=timeout)


def test_cli_usage_errors_exit_2_and_a_module_that_fails_to_import_exits_1(server: SluiceServer) -> None:
    cases = [
        (["worker", "handlers:record"], 2, "--queue"),
        (["worker", "handlers", "--queue", "q", "--url", server.url], 2, "module:function"),
        (["worker", "handlers:record", "--queue", "bad.name", "--url", server.url], 2, "--queue must be"),
        (["worker", "no_such_module:f", "--queue", "q", "--url", server.url], 2, "not found"),
        (["worker", "handlers:nope", "--queue", "q", "--url", server.url], 2, "has no nope"),
        (["worker", "handlers:not_callable", "--queue", "q", "--url", server.url], 2, "not callable"),
        (["worker", "handlers:record", "--queue", "q", "--concurrency", "0x10"], 2, "integer"),
        (["worker", "handlers:record", "--queue", "q", "--batch-window-ms", "5"], 2, "needs --batch-size"),
        (["worker", "handlers:record", "--queue", "q", "--url", "localhost:9324"], 2, "http"),
        (["worker", "broken_module:f", "--queue", "q", "--url", server.url], 1, "the model file is missing"),
    ]
    for args, code, says in cases:
        result = run_cli(*args)
        assert (result.returncode, says in result.stderr) == (code, True), (args, result.stderr)
        assert "Sluice worker ready" not in result.stdout


def test_cli_exits_1_when_the_server_refuses_every_lease(server: SluiceServer) -> None:
    # A URL whose server is not a jobs API: every lease request is a 404 no retry fixes.
    result = run_cli("worker", "handlers:record", "--queue", "q", "--url", server.url + "/not-here")
    assert result.returncode == 1, result.stderr
    assert "refuses its lease requests" in result.stderr
