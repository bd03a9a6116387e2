"""examples/python-digits/README.md, replayed: its shell commands are read from the page and run —
the worker and the HTTP front as processes, each curl as the same HTTP request — against a real
server on a free port (the page's 9324 and 8000 swapped for the ones the test got)."""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Dict, List, Tuple

from sluice_client import Sluice
from support import REPO, Process, SluiceServer, wait_until

EXAMPLE = REPO / "examples" / "python-digits"
README = EXAMPLE / "README.md"


def readme_blocks(lang: str) -> List[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), re.S)


def commands() -> List[str]:
    lines = [line.strip() for block in readme_blocks("sh") for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


class Shell:
    """Just enough of a POSIX shell for the page: cd, export, and ``"$(command)"``."""

    def __init__(self, server_url: str) -> None:
        self.cwd = REPO
        self.env = dict(os.environ, SLUICE_URL=server_url, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")

    def words(self, line: str) -> List[str]:
        def substitute(m: "re.Match[str]") -> str:
            out = subprocess.run(self.argv(shlex.split(m.group(1))), cwd=self.cwd, env=self.env, capture_output=True, text=True, check=True)
            return shlex.quote(out.stdout.strip())

        return shlex.split(re.sub(r'"\$\((.*?)\)"', substitute, line), comments=True)

    def argv(self, words: List[str]) -> List[str]:
        # Debian's interpreter (the one running this test, with python3-sklearn), not a PATH shim.
        return [sys.executable if w == "python3" else w for w in words]

    def run_builtin(self, words: List[str]) -> bool:
        if words[0] == "cd":
            # Every terminal of the page starts at the repository root.
            self.cwd = (REPO / words[1]).resolve()
            return True
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            self.env[name] = ":".join(str((self.cwd / p).resolve()) for p in value.split(":"))
            return True
        return False


def curl(words: List[str], base: str) -> Tuple[int, object]:
    """The request curl would send for these words (-s, -X, -H, -d), to ``base`` instead of the page's."""
    assert words[0] == "curl"
    method, data, url, headers = None, None, None, {}
    i = 1
    while i < len(words):
        w = words[i]
        if w == "-s":
            pass
        elif w == "-X":
            i += 1
            method = words[i]
        elif w == "-H":
            i += 1
            name, _, value = words[i].partition(":")
            headers[name.strip()] = value.strip()
        elif w == "-d":
            i += 1
            data = words[i].encode()
        elif w.startswith("-"):
            raise AssertionError(f"the page uses a curl flag this test does not know: {w}")
        else:
            url = w
        i += 1
    assert url and url.startswith("http://127.0.0.1:8000/"), url
    req = urllib.request.Request(base + url[len("http://127.0.0.1:8000") :], data=data, method=method or ("POST" if data else "GET"), headers=headers)
    with urllib.request.urlopen(req, timeout=60) as res:
        return res.status, json.loads(res.read())


def shown_json(after: str) -> Dict[str, object]:
    """The ```json block the page shows right after the command containing ``after``."""
    text = README.read_text()
    start = text.index(after)
    return json.loads(re.search(r"```json\n(.*?)```", text[start:], re.S).group(1))  # type: ignore[union-attr]


def test_the_walkthrough_as_written(own_server: SluiceServer) -> None:
    cmds = commands()
    assert cmds[0] == "npm start"
    shell = Shell(own_server.url)
    procs: List[Process] = []
    try:
        worker = app = None
        for line in cmds[1:]:
            words = shell.words(line)
            if shell.run_builtin(words):
                continue
            if words[:4] == ["python3", "-m", "sluice_client", "worker"] and "worker:predict" in words:
                worker = Process(shell.argv(words), shell.cwd, shell.env)
                procs.append(worker)
                worker.wait_for_line(r"Sluice worker ready on queue digits \(concurrency 2, single jobs, lease 30 s\)", timeout=120)
                wait_until(lambda: re.search(r"digits model trained: 9\d\.\d% accurate", worker.stderr()), what="the model's accuracy")
            elif words == ["python3", "app.py"]:
                app = Process(shell.argv(words) + ["--port", "0"], shell.cwd, shell.env)
                procs.append(app)
                base = app.wait_for_line(r"digits API on (http://127\.0\.0\.1:\d+)").group(1)
            elif words[0] == "curl" and "/submit_job" in line:
                status, submitted = curl(words, base)
                assert status == 202 and set(submitted) == set(shown_json("/submit_job -H")) == {"job_id"}  # type: ignore[arg-type]
                job_id = submitted["job_id"]  # type: ignore[index]
            elif words[0] == "curl" and "/get_job_result/" in line:
                status, result = curl([w.replace("<job_id>", job_id) for w in words], base)
                shown = shown_json("/get_job_result/<job_id>?wait=30")
                assert status == 200 and result["status"] == shown["status"] == "succeeded"  # type: ignore[index]
                assert result["result"]["digit"] == shown["result"]["digit"] == 8  # type: ignore[index]
                assert result["result"]["confidence"] > 0.5  # type: ignore[index]
            elif "worker:predict_batch" in words:
                continue  # the batch variant: test_the_batch_worker below
            else:
                raise AssertionError(f"the page has a command this test does not replay: {line}")
        assert worker and app, "the page must start the worker and the HTTP front"
        # A malformed image fails at once, as the page says.
        status, bad = curl(["curl", "-X", "POST", "http://127.0.0.1:8000/submit_job", "-d", '{"pixels": [1, 2]}'], base)
        _, failed = curl(["curl", f"http://127.0.0.1:8000/get_job_result/{bad['job_id']}?wait=30"], base)  # type: ignore[index]
        assert failed["status"] == "failed" and failed["error"]["type"] == "NonRetryableError"  # type: ignore[index]
        # Ctrl-C: the worker finishes the job in hand and exits 0.
        worker.signal(signal.SIGINT)
        assert worker.wait(30) == 0
    finally:
        for p in procs:
            p.kill()


def test_the_batch_worker(own_server: SluiceServer) -> None:
    line = next(c for c in commands() if "predict_batch" in c)
    shell = Shell(own_server.url)
    shell.env["PYTHONPATH"] = os.pathsep.join([str(REPO / "clients/python/src"), str(EXAMPLE)])
    shell.cwd = EXAMPLE
    worker = Process(shell.argv(shell.words(line)), EXAMPLE, shell.env)
    try:
        worker.wait_for_line(r"Sluice worker ready on queue digits \(concurrency 1, batches of ≤ 32 within 20 ms", timeout=120)
        sys.path.insert(0, str(EXAMPLE))
        import digits

        q = Sluice(own_server.url).queue("digits")
        samples = [digits.held_out(i) for i in range(40)]
        jobs = [q.submit({"pixels": pixels}) for pixels, _ in samples] + [q.submit({"pixels": "not an image"})]
        done = [j.wait(timeout=60) for j in jobs]
        right = sum(1 for job, (_, label) in zip(done, samples) if job.status == "succeeded" and job.output["digit"] == label)
        assert right >= 38
        assert (done[-1].status, done[-1].attempt) == ("failed", 1)
        worker.signal(signal.SIGTERM)
        assert worker.wait(30) == 0
    finally:
        worker.kill()
