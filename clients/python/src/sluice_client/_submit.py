"""Submits: alone (``POST …/jobs``), or gathered — the submit() and run() calls made in one
event-loop turn for one queue go out as one ``POST …/jobs/batch`` (with ``?wait=`` for run(), whose
answer streams a line per job as each finishes). Each caller still gets its own job or its own
error; a call alone in its turn is sent alone. docs/sdk-wire-spec.md, "Submitting"."""
from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Protocol, Tuple

from ._http import HttpClient, is_retryable
from ._paths import queue_path
from ._tasks import spawn
from .errors import SluiceApiError, SluiceNetworkError

# The server takes at most this many jobs in one batch.
SUBMIT_BATCH_MAX_JOBS = 100
_LONG_POLL_GRACE_SECONDS = 30.0
_KNOWN_NOT_FOUND_CODES = frozenset(("JobNotFound", "QueueNotFound", "ResourceNotFound"))

Submitted = Tuple[Dict[str, Any], bool]


class SubmitChannel(Protocol):
    """What submits need of the client: its HTTP client and how many attempts a request gets."""

    http: HttpClient
    attempts: int


async def submit_alone(core: SubmitChannel, queue: str, entry: Dict[str, Any], wait_seconds: int) -> Submitted:
    """``POST …/jobs`` with the key as the Idempotency-Key header, retried as the other idempotent calls."""
    body = {k: v for k, v in entry.items() if k != "idempotencyKey"}
    key = entry.get("idempotencyKey")
    res = await core.http.request(
        "POST",
        queue_path(queue) + "/jobs",
        body=body,
        query={"wait": wait_seconds} if wait_seconds > 0 else None,
        headers={"Idempotency-Key": key} if key is not None else None,
        max_attempts=core.attempts,
        timeout=wait_seconds + _LONG_POLL_GRACE_SECONDS if wait_seconds > 0 else 30.0,
    )
    return res.body["job"], res.status == 200


class _Pending:
    __slots__ = ("entry", "wait_seconds", "future")

    def __init__(self, entry: Dict[str, Any], wait_seconds: int, future: "asyncio.Future[Submitted]") -> None:
        self.entry = entry
        self.wait_seconds = wait_seconds
        self.future = future

    def resolve(self, value: Submitted) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def reject(self, err: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(err)


class SubmitBatcher:
    def __init__(self, core: SubmitChannel, queue: str) -> None:
        self._core = core
        self._queue = queue
        self._pending: List[_Pending] = []
        # False once the server turned out to have no batch route: every submit then goes alone.
        self._batch_route = True

    async def submit(self, entry: Dict[str, Any], wait_seconds: int) -> Submitted:
        loop = asyncio.get_running_loop()
        future: "asyncio.Future[Submitted]" = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append(_Pending(entry, wait_seconds, future))
        return await future

    def _flush(self) -> None:
        # A caller cancelled before the batch left creates no job.
        ready = [p for p in self._pending if not p.future.done()]
        self._pending = []
        by_wait: Dict[int, List[_Pending]] = {}
        for p in ready:
            by_wait.setdefault(p.wait_seconds, []).append(p)
        for wait_seconds, group in by_wait.items():
            if len(group) == 1 or not self._batch_route:
                for p in group:
                    self._send_alone(p, wait_seconds)
            else:
                for i in range(0, len(group), SUBMIT_BATCH_MAX_JOBS):
                    self._start_batch(group[i : i + SUBMIT_BATCH_MAX_JOBS], wait_seconds)

    def _send_alone(self, p: _Pending, wait_seconds: int) -> None:
        async def send() -> None:
            try:
                p.resolve(await submit_alone(self._core, self._queue, p.entry, wait_seconds))
            except Exception as err:  # noqa: BLE001 - handed to the caller
                p.reject(err)

        task = spawn(send())
        p.future.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)

    def _start_batch(self, batch: List[_Pending], wait_seconds: int) -> None:
        task = spawn(self._send(batch, wait_seconds, 1))

        # Once every caller gave up, the request goes too: the server then drops their holds.
        def on_done(f: "asyncio.Future[Submitted]") -> None:
            if f.cancelled() and all(p.future.done() for p in batch) and not task.done():
                task.cancel()

        for p in batch:
            p.future.add_done_callback(on_done)

    async def _send(self, batch: List[_Pending], wait_seconds: int, attempt: int) -> None:
        core = self._core
        path = queue_path(self._queue) + "/jobs/batch"

        def on_result(result: Dict[str, Any]) -> None:
            index = result.get("index")
            if not isinstance(index, int) or not 0 <= index < len(batch):
                return
            p = batch[index]
            status = int(result.get("status", 0))
            if "job" in result and result["job"] is not None:
                p.resolve((result["job"], status == 200))
            else:
                error = result.get("error") or {}
                p.reject(SluiceApiError(error.get("code", f"Http{status}"), status, error.get("message", f"HTTP {status}")))

        try:
            body = {"jobs": [p.entry for p in batch]}
            if wait_seconds > 0:
                await core.http.request_lines(
                    "POST", path, body=body, query={"wait": wait_seconds}, timeout=wait_seconds + _LONG_POLL_GRACE_SECONDS, on_line=on_result
                )
            else:
                res = await core.http.request("POST", path, body=body)
                for result in res.body["results"]:
                    on_result(result)
            unanswered = sum(1 for p in batch if not p.future.done())
            if unanswered:
                raise SluiceNetworkError(f"POST {path}: the answer ended without {unanswered} of its jobs")
        except (SluiceApiError, SluiceNetworkError) as err:
            if isinstance(err, SluiceApiError) and _refused_as_a_whole(err):
                # Nothing was submitted (one entry's bad option fails the whole body's validation,
                # or the bodies together are too large, or the server has no batch route): each
                # goes alone, for the outcome it would have had.
                if _route_missing(err):
                    self._batch_route = False
                for p in batch:
                    if not p.future.done():
                        self._send_alone(p, wait_seconds)
                return
            # Resending is safe only for entries with an idempotency key: one the server already
            # took gives back the same job. The others get the failure now.
            retrying = is_retryable(err) and attempt < core.attempts
            again = [p for p in batch if retrying and not p.future.done() and "idempotencyKey" in p.entry]
            for p in batch:
                if p not in again:
                    p.reject(err)
            if again:
                await asyncio.sleep(core.http.retry_delay(attempt, err))
                still = [p for p in again if not p.future.done()]
                if still:
                    await self._send(still, wait_seconds, attempt + 1)
        except Exception as err:  # noqa: BLE001 - a malformed answer: every caller hears it
            for p in batch:
                p.reject(err)


def _route_missing(err: SluiceApiError) -> bool:
    """A server from before ``POST …/jobs/batch``: its router's 404 (no API code) or a 405."""
    return err.status == 405 or (err.status == 404 and err.code not in _KNOWN_NOT_FOUND_CODES)


def _refused_as_a_whole(err: SluiceApiError) -> bool:
    return err.status in (400, 413) or _route_missing(err)


