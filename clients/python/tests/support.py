"""Real processes for the Python SDK's tests: a Sluice server (the repository's CLI, run from its
TypeScript source as the other test suites run it), the shared fault proxy, and Python workers
started with ``python -m sluice_client worker``. Each is stopped by the fixture that made it."""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(__file__).resolve().parents[3]
SDK_SRC = REPO / "clients" / "python" / "src"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
NODE = os.environ.get("SLUICE_TEST_NODE", "node")


class Process:
    """A child process whose output is collected by a thread, so it never blocks on a full pipe."""

    def __init__(self, args: List[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> None:
        self.args = args
        self.proc = subprocess.Popen(
            args, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )
        self.pid = self.proc.pid
        self.out: List[str] = []
        self.err: List[str] = []
        self._lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.out, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err, False), daemon=True).start()

    def _pump(self, stream: Any, into: List[str], lines: bool) -> None:
        for line in stream:
            into.append(line)
            if lines:
                self._lines.put(line)

    def wait_for_line(self, pattern: str, timeout: float = 60.0) -> "re.Match[str]":
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and self._lines.empty():
                raise AssertionError(f"{self.args[:6]} did not print {pattern!r} (exit {self.proc.poll()})\nstdout: {self.stdout()}\nstderr: {self.stderr()}")
            try:
                line = self._lines.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            m = re.search(pattern, line)
            if m:
                return m

    def stdout(self) -> str:
        return "".join(self.out)

    def stderr(self) -> str:
        return "".join(self.err)

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.running:
            self.proc.kill()
            self.proc.wait(10)


class SluiceServer:
    """``sluice serve`` on a data directory; restart() brings it back on the same port and data."""

    def __init__(self, data_dir: Path, extra_args: Optional[List[str]] = None) -> None:
        self.data_dir = data_dir
        self.extra_args = extra_args or []
        self.port = 0
        self.url = ""
        self.process: Optional[Process] = None

    def start(self) -> "SluiceServer":
        args = [NODE, "--import", "tsx", "src/cli/main.ts", "serve", "--port", str(self.port), "--data-dir", str(self.data_dir), *self.extra_args]
        self.process = Process(args, REPO)
        m = self.process.wait_for_line(r"Sluice listening on (http://127\.0\.0\.1:(\d+))")
        self.url, self.port = m.group(1), int(m.group(2))
        return self

    def stop(self) -> None:
        """SIGTERM: the server drains and exits 0."""
        if self.process and self.process.running:
            self.process.signal(signal.SIGTERM)
            code = self.process.wait(30)
            assert code == 0, f"server exited {code}: {self.process.stderr()}"

    def kill(self) -> None:
        if self.process:
            self.process.kill()

    def restart(self) -> None:
        self.stop()
        self.start()


class FaultProxy:
    """test/support/fault-proxy.ts in front of a server (the same proxy the TypeScript SDK's tests use)."""

    def __init__(self, target: str) -> None:
        self.process = Process([NODE, "--import", "tsx", "test/support/fault-proxy-main.ts", target], REPO)
        self.url = self.process.wait_for_line(r"fault proxy listening on (http://\S+)").group(1)

    def add_fault(
        self,
        path: str,
        action: str,
        method: Optional[str] = None,
        status: Optional[int] = None,
        retry_after: Optional[str] = None,
        times: int = 1,
        body: Optional[str] = None,
    ) -> None:
        spec: Dict[str, Any] = {"path": path, "action": action, "times": times}
        if body is not None:
            spec["body"] = body
        if method:
            spec["method"] = method
        if status is not None:
            spec["status"] = status
        if retry_after is not None:
            spec["retryAfter"] = retry_after
        http_json("POST", self.url + "/__proxy/faults", spec)

    def log(self) -> List[Dict[str, Any]]:
        return http_json("GET", self.url + "/__proxy/log")["requests"]

    def clear_faults(self) -> None:
        http_json("DELETE", self.url + "/__proxy/faults")

    def close(self) -> None:
        self.process.kill()


def http_json(method: str, url: str, body: Any = None) -> Any:
    """A plain urllib request, independent of the SDK under test."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            text = res.read().decode()
    except urllib.error.HTTPError as err:
        text = err.read().decode()
    return json.loads(text) if text else None


def queue_stats(server_url: str, queue_name: str) -> Dict[str, int]:
    return http_json("GET", f"{server_url}/v1/queues/{queue_name}")["queue"]["stats"]["jobs"]


def wait_until(probe: Any, timeout: float = 20.0, what: str = "condition", interval: float = 0.02) -> Any:
    """Bounded polling of observable state; fails loudly when it never becomes true."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def worker_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SDK_SRC), str(FIXTURES)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def spawn_worker(url: str, target: str, queue_name: str, *args: str, env: Optional[Dict[str, str]] = None, ready: bool = True) -> Process:
    """``python -m sluice_client worker target --queue q --url url ...``, ready once it says so."""
    p = Process([sys.executable, "-m", "sluice_client", "worker", target, "--queue", queue_name, "--url", url, *args], FIXTURES, worker_env(env))
    if ready:
        p.wait_for_line(r"Sluice worker ready on queue")
    return p


def read_log(path: Path) -> List[Dict[str, Any]]:
    """A fixture's invocation log: one ``<event> <job id> <attempt> <pid>`` line per event."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        event, job_id, attempt, pid = line.split(" ")
        rows.append({"event": event, "job_id": job_id, "attempt": int(attempt), "pid": int(pid)})
    return rows
