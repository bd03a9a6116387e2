"""examples/attachments/README.md's Python walkthrough, replayed (walkthrough.py): its commands are
read from the page and run — the worker as a process, the client to its end — against a real
server on a free port; the client's output must be the page's, and the file it saved the edges of
the page's picture, as edges.py and edges.js both compute them."""
from __future__ import annotations

import hashlib
import json
import shlex
import signal
import subprocess
import sys

from support import REPO, Process, SluiceServer, http_json
from walkthrough import Terminal, Walkthrough

EXAMPLE = REPO / "examples" / "attachments"
PAGE = Walkthrough(EXAMPLE / "README.md")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_walkthrough_as_written(own_server: SluiceServer) -> None:
    worker = None
    saved = None
    terminal = Terminal(own_server.url)
    try:
        for line in PAGE.commands():
            words = shlex.split(line)
            if words[0] == "cd":
                terminal = Terminal(own_server.url)  # a new terminal starts with cd
            if terminal.builtin(words):
                continue
            if words[:4] == ["python3", "-m", "sluice_client", "worker"]:
                worker = Process(terminal.argv(words), terminal.cwd, terminal.env)
                worker.wait_for_line(r"Sluice worker ready on queue edges", timeout=60)
            elif words[:2] == ["python3", "client.py"]:
                assert worker is not None, "the page starts the worker before the client"
                saved = terminal.cwd / words[3]
                out = subprocess.run(terminal.argv(words), cwd=terminal.cwd, env=terminal.env, capture_output=True, text=True, timeout=60)
                assert (out.returncode, out.stderr) == (0, ""), out.stderr
                assert out.stdout == PAGE.shown_output()
                picture = (terminal.cwd / words[2]).read_bytes()
            else:
                raise AssertionError(f"the page has a command this test does not replay: {line}")
        assert worker is not None and saved is not None

        sys.path.insert(0, str(EXAMPLE))
        try:
            import edges
        finally:
            sys.path.remove(str(EXAMPLE))
        expected = edges.write_pgm(edges.sobel(edges.parse_pgm(picture)))
        assert sha(saved.read_bytes()) == sha(expected)
        [job] = http_json("GET", f"{own_server.url}/v1/queues/edges/jobs")["jobs"]
        assert (job["status"], job["attachments"]["image"]["sha256"], job["outputAttachments"]["edges"]["sha256"]) == ("succeeded", sha(picture), sha(expected))

        # Ctrl-C: the worker finishes the picture in hand and exits 0.
        worker.signal(signal.SIGINT)
        assert worker.wait(30) == 0
    finally:
        if worker is not None:
            worker.kill()
        if saved is not None and saved.exists():
            saved.unlink()


def test_both_languages_find_the_same_edges() -> None:
    """edges.py and edges.js are one algorithm: the same picture gives the same bytes."""
    script = (
        "import('./edges.js').then(async (m) => { const fs = await import('node:fs');"
        " const b = m.writePgm(m.sobel(m.parsePgm(fs.readFileSync('shapes.pgm'))));"
        " console.log(JSON.stringify(Buffer.from(b).toString('hex'))); })"
    )
    node = subprocess.run(["node", "-e", script], cwd=EXAMPLE, capture_output=True, text=True, timeout=60, check=True)
    sys.path.insert(0, str(EXAMPLE))
    try:
        import edges
    finally:
        sys.path.remove(str(EXAMPLE))
    ours = edges.write_pgm(edges.sobel(edges.parse_pgm((EXAMPLE / "shapes.pgm").read_bytes())))
    assert json.loads(node.stdout) == ours.hex()
