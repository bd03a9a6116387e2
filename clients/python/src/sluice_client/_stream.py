"""``job.stream()``: a job's streamed output (what its worker sends with ctx.emit), chunk by chunk
and in order, from its first chunk until the job ends. It follows the job's event stream (which
resumes by itself after a dropped connection) and reads what came before it joined from
``GET /v1/jobs/{id}/output-chunks``; chunks are placed by their index, so none is given twice."""
from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Dict, Optional

from ._http import HttpClient
from ._paths import job_path
from .errors import JobCanceledError, JobFailedError
from .jobs import TERMINAL_STATUSES

OnNewAttempt = Optional[Callable[[int], None]]


class _Position:
    """The attempt the stream follows and the index of the next chunk it gives."""

    __slots__ = ("attempt", "next", "on_new_attempt")

    def __init__(self, on_new_attempt: OnNewAttempt) -> None:
        self.attempt = 0
        self.next = 0
        self.on_new_attempt = on_new_attempt

    def new_attempt(self, attempt: int) -> None:
        if (self.attempt > 0 or self.next > 0) and self.on_new_attempt is not None:
            self.on_new_attempt(attempt)
        self.attempt = attempt
        self.next = 0


async def job_output(http: HttpClient, job_id: str, events: AsyncIterator[Dict[str, Any]], on_new_attempt: OnNewAttempt) -> AsyncIterator[Any]:
    """The chunks of ``job_id``; ``events`` is the job's event stream (a ``job.snapshot`` first).
    Ends when the job succeeds; raises JobFailedError when it fails, JobCanceledError when canceled."""
    at = _Position(on_new_attempt)
    last: Optional[Dict[str, Any]] = None
    try:
        # The snapshot comes once the server follows the job: what was stored before it is read
        # next, and what comes after arrives as events (chunks seen twice are placed once).
        async for first in events:
            last = first.get("job")
            break
        if last is None:
            return
        async for chunk in _catch_up(http, job_id, at):
            yield chunk
        if last.get("status") not in TERMINAL_STATUSES:
            async for event in events:
                if event.get("type") == "job.output":
                    async for chunk in _place(http, job_id, at, event):
                        yield chunk
                else:
                    if event.get("type") == "job.snapshot":
                        # A reconnect that had no position starts over with a snapshot: read what was stored meanwhile.
                        async for chunk in _catch_up(http, job_id, at):
                            yield chunk
                    last = event.get("job", last)
                    if last.get("status") in TERMINAL_STATUSES:
                        break
        # Anything stored that no event brought (the stream ended early, or the job had ended before).
        async for chunk in _catch_up(http, job_id, at):
            yield chunk
    finally:
        await events.aclose()  # type: ignore[attr-defined]
    if last.get("status") == "failed":
        raise JobFailedError(last)
    if last.get("status") == "canceled":
        raise JobCanceledError(job_id)


async def _catch_up(http: HttpClient, job_id: str, at: _Position) -> AsyncIterator[Any]:
    """The chunks stored from the position on, page by page, as the server has them now."""
    while True:
        page = (await http.request("GET", job_path(job_id) + "/output-chunks", query={"from": at.next}, max_attempts=3)).body
        if page["attempt"] < at.attempt:
            return
        if page["attempt"] > at.attempt:
            restart = at.next != 0
            at.new_attempt(page["attempt"])
            if restart:
                continue  # read the new attempt from its first chunk
        if not page["chunks"]:
            return
        for chunk in page["chunks"]:
            yield chunk
        at.next += len(page["chunks"])


async def _place(http: HttpClient, job_id: str, at: _Position, event: Dict[str, Any]) -> AsyncIterator[Any]:
    """One job.output event's chunks at their index: older attempts dropped, overlaps trimmed, a gap read first."""
    attempt, index, chunks = event["attempt"], event["index"], event["chunks"]
    if attempt < at.attempt:
        return
    if attempt > at.attempt:
        at.new_attempt(attempt)
    if index > at.next:
        async for chunk in _catch_up(http, job_id, at):
            yield chunk
        if at.attempt != attempt:
            return  # the catch-up found a newer attempt
    start = at.next - index
    if start < 0 or start >= len(chunks):
        return
    for chunk in chunks[start:]:
        yield chunk
    at.next = index + len(chunks)
