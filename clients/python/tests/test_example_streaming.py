"""examples/streaming/README.md's Python walkthrough, replayed: its commands are read from the page
and run — the worker as a process, the client to its end — against a real server on a free port,
and the client's output must be the page's. The job it ran must have streamed: one stored chunk
per token, sent in more than one request while it ran."""
from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import urllib.request

from support import REPO, Process, SluiceServer, http_json
from walkthrough import Terminal, Walkthrough

PAGE = Walkthrough(REPO / "examples" / "streaming" / "README.md")


def test_the_walkthrough_as_written(own_server: SluiceServer) -> None:
    cmds = PAGE.commands()
    worker = None
    ran_client = False
    terminal = Terminal(own_server.url)
    try:
        for line in cmds:
            words = shlex.split(line)
            if words[0] == "cd":
                terminal = Terminal(own_server.url)  # a new terminal starts with cd
            if terminal.builtin(words):
                continue
            if words[:4] == ["python3", "-m", "sluice_client", "worker"]:
                worker = Process(terminal.argv(words), terminal.cwd, terminal.env)
                worker.wait_for_line(r"Sluice worker ready on queue stories", timeout=60)
            elif words[:2] == ["python3", "client.py"]:
                assert worker is not None, "the page starts the worker before the client"
                out = subprocess.run(terminal.argv(words), cwd=terminal.cwd, env=terminal.env, capture_output=True, text=True, timeout=60)
                assert (out.returncode, out.stderr) == (0, "")
                assert out.stdout == PAGE.shown_output()
                prompt = words[2]
                ran_client = True
            else:
                raise AssertionError(f"the page has a command this test does not replay: {line}")
        assert worker is not None and ran_client

        # The job streamed: a chunk per token, each stored, in more than one output request.
        tokens = int(re.search(r"\((\d+) tokens\)", PAGE.shown_output()).group(1))  # type: ignore[union-attr]
        [job] = http_json("GET", f"{own_server.url}/v1/queues/stories/jobs")["jobs"]
        assert job["status"] == "succeeded"
        assert f"{prompt}{job['output']['text']}\n({tokens} tokens)\n" == PAGE.shown_output()
        chunks = http_json("GET", f"{own_server.url}/v1/jobs/{job['id']}/output-chunks")
        assert (len(chunks["chunks"]), chunks["done"], "".join(chunks["chunks"])) == (tokens, True, job["output"]["text"])
        with urllib.request.urlopen(f"{own_server.url}/v1/jobs/{job['id']}/events?since=0", timeout=30) as res:
            events = res.read().decode()
        assert len(re.findall(r"^event: job\.output$", events, re.M)) > 1

        # Ctrl-C: the worker finishes the story in hand and exits 0.
        worker.signal(signal.SIGINT)
        assert worker.wait(30) == 0
    finally:
        if worker is not None:
            worker.kill()


def test_both_languages_tell_the_same_story() -> None:
    """markov.py and markov.js are one algorithm: the same prompt gives the same tokens."""
    example = REPO / "examples" / "streaming"
    sys.path.insert(0, str(example))
    try:
        import markov
    finally:
        sys.path.remove(str(example))
    prompts = ["In the morning", "The keeper of the sluice", "a queue", "nothing the corpus has"]
    script = "import('./markov.js').then((m) => console.log(JSON.stringify(JSON.parse(process.argv[1]).map((p) => [...m.generate(p)]))))"
    node = subprocess.run(["node", "-e", script, json.dumps(prompts)], cwd=example, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(node.stdout) == [list(markov.generate(p)) for p in prompts]
