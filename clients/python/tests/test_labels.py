"""Worker labels and job requirements against a real server: ``requires`` on submit, ``labels`` and
``worker_id`` on a worker (sync and asyncio), sent with every lease request."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from sluice_client import AsyncSluice, Sluice


def _run_until(sluice: Sluice, queue: str, n: int, **options: object) -> list:
    ran: list = []
    done = threading.Event()

    def handle(job):  # type: ignore[no-untyped-def]
        ran.append(job.id)
        if len(ran) == n:
            done.set()
        return {"labels": options.get("labels")}

    with sluice.queue(queue).work(handle, concurrency=2, **options):  # type: ignore[arg-type]
        assert done.wait(20), f"{n} jobs were not run"
    return ran


def test_a_labelled_worker_runs_what_it_can_and_an_unlabelled_one_only_jobs_that_require_nothing(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    gpu = q.submit({"n": 1}, requires={"gpu": "a100"})
    plain = q.submit({"n": 2})
    assert gpu.requires == {"gpu": "a100"} and plain.requires is None
    assert _run_until(sluice, queue_name, 1, worker_id="py-cpu") == [plain.id]
    assert _run_until(sluice, queue_name, 1, labels={"gpu": "a100", "region": "eu"}, worker_id="py-gpu") == [gpu.id]
    done = sluice.jobs.get(gpu.id)
    assert (done.status, done.output) == ("succeeded", {"labels": {"gpu": "a100", "region": "eu"}})
    # The server writes what its leases saw at most a second later.
    deadline = time.monotonic() + 20
    while True:
        seen = {w["workerId"]: w for w in sluice.workers()}
        if "py-cpu" in seen and "py-gpu" in seen:
            break
        assert time.monotonic() < deadline, f"workers not listed: {sorted(seen)}"
        time.sleep(0.1)
    assert (seen["py-gpu"]["queues"], seen["py-gpu"]["labels"]) == ([queue_name], {"gpu": "a100", "region": "eu"})
    assert seen["py-cpu"]["labels"] is None


def test_async_worker_with_labels(server, queue_name: str) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with AsyncSluice(server.url) as sluice:
            q = sluice.queue(queue_name)
            job = await q.submit({"n": 1}, requires={"pool": "big"})
            seen = asyncio.Event()

            async def handle(j):  # type: ignore[no-untyped-def]
                seen.set()
                return "ok"

            worker = q.work(handle, labels={"pool": "big"})
            await asyncio.wait_for(seen.wait(), 20)
            await worker.close()
            assert (await sluice.jobs.get(job.id)).status == "succeeded"

    asyncio.run(main())


def test_bad_labels_are_refused_before_anything_is_leased(sluice: Sluice, queue_name: str) -> None:
    with pytest.raises(TypeError, match="labels must map str to str"):
        sluice.queue(queue_name).work(lambda j: None, labels={"gpu": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="worker_id"):
        sluice.queue(queue_name).work(lambda j: None, worker_id="")


def test_to_a_server_from_before_the_workers_list_a_worker_stops_sending_its_id() -> None:
    import http.server
    import json

    bodies: list = []
    seen_without = threading.Event()

    class OldServer(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            bodies.append(body)
            refused = "workerId" in body
            if not refused:
                seen_without.set()
            answer = {"error": {"code": "ValidationFailed", "message": "body.workerId is not a field of this request."}} if refused else {"jobs": []}
            data = json.dumps(answer).encode()
            self.send_response(400 if refused else 200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OldServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        worker = Sluice(f"http://127.0.0.1:{server.server_address[1]}").queue("q").work(lambda j: None, worker_id="w-old")
        assert seen_without.wait(10), f"the worker kept sending workerId: {bodies}"
        worker.close()
    finally:
        server.shutdown()
    assert "workerId" in bodies[0] and all("workerId" not in b for b in bodies[1:])
