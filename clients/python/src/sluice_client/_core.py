"""The client's calls, written once for asyncio: the blocking client runs them on a private event
loop thread (_loop_thread.py), the asyncio client on the caller's loop. Jobs travel as the wire's
dicts here; the public classes wrap them."""
from __future__ import annotations

import asyncio
import datetime
import math
import uuid
from typing import Any, AsyncIterator, Callable, Dict, List, Optional, Tuple

from ._blob_transfer import BlobTransfer
from ._events import event_stream
from ._stream import job_output
from ._http import DEFAULT_TIMEOUT_SECONDS, HttpClient
from ._paths import job_path, queue_path, schedule_path
from ._retry import Backoff
from ._submit import SubmitBatcher, submit_alone
from .errors import JobWaitTimeoutError
from .jobs import TERMINAL_STATUSES, JobSnapshot

# The server holds one GET ?wait= (or submit ?wait=) at most this long.
MAX_WAIT_SLICE_SECONDS = 60
# Slack on top of a long poll before the SDK calls the connection dead.
LONG_POLL_GRACE_SECONDS = 30.0

_SUBMIT_FIELDS = {
    "priority": "priority",
    "delay_seconds": "delaySeconds",
    "timeout_seconds": "timeoutSeconds",
    "max_attempts": "maxAttempts",
    "metadata": "metadata",
    "tenant": "tenant",
    "requires": "requires",
    "depends_on": "dependsOn",
    "on_parent_failure": "onParentFailure",
}


def check_timeout(timeout: Optional[float], name: str = "timeout") -> None:
    """None waits forever (so does math.inf); a negative timeout has already passed. NaN, a string
    or a bool is refused before anything is sent: it would otherwise fail at once or never."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"{name} must be a number of seconds (or None to wait forever), got {timeout!r}")
    if math.isnan(timeout):
        raise ValueError(f"{name} must be a number of seconds (or None to wait forever), got nan")


def is_terminal(job: Dict[str, Any]) -> bool:
    return job.get("status") in TERMINAL_STATUSES


class JobsCore:
    def __init__(self, url: str, token: Optional[str], attempts: int, backoff: Backoff, batch_submits: bool, account: Optional[str] = None) -> None:
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(f"attempts must be a whole number ≥ 1, got {attempts!r}")
        self.http = HttpClient(url, token, backoff, account)
        self.attempts = attempts
        #: Uploads and downloads attachments.
        self.transfer = BlobTransfer(self.http, attempts)
        self._batchers: Optional[Dict[str, SubmitBatcher]] = {} if batch_submits else None

    async def get(self, job_id: str) -> Dict[str, Any]:
        res = await self.http.request("GET", job_path(_text("job id", job_id)), max_attempts=self.attempts)
        return res.body["job"]

    async def cancel(self, job_id: str) -> Dict[str, Any]:
        """A queued job is canceled at once, a running one when its worker sees it."""
        res = await self.http.request("POST", job_path(_text("job id", job_id)) + "/cancel", max_attempts=self.attempts)
        return res.body["job"] if res.body else await self.get(job_id)

    async def list(self, queue: str, status: Optional[str], limit: Optional[int], cursor: Optional[str]) -> Tuple[list, Optional[str]]:
        res = await self.http.request(
            "GET",
            queue_path(_text("queue name", queue)) + "/jobs",
            query={"status": status, "limit": limit, "cursor": cursor},
            max_attempts=self.attempts,
        )
        return res.body["jobs"], res.body.get("nextCursor")

    async def wait(self, job_id: str, timeout: Optional[float]) -> Dict[str, Any]:
        """Long-polls until the job is terminal, in slices of at most 60 s (the server's limit),
        so one wait outlasts any proxy's idle timeout; JobWaitTimeoutError once ``timeout`` passes."""
        check_timeout(timeout)
        _text("job id", job_id)
        loop = asyncio.get_running_loop()
        deadline = math.inf if timeout is None else loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                last = await self.get(job_id)
                if is_terminal(last):
                    return last
                raise JobWaitTimeoutError(JobSnapshot(last))
            # No timeout: whole slices (ceil of infinity is an OverflowError, not a number of seconds).
            wait_seconds = MAX_WAIT_SLICE_SECONDS if math.isinf(remaining) else min(MAX_WAIT_SLICE_SECONDS, math.ceil(remaining))
            poll = self.http.request(
                "GET",
                job_path(job_id),
                query={"wait": wait_seconds},
                max_attempts=self.attempts,
                timeout=wait_seconds + LONG_POLL_GRACE_SECONDS,
            )
            try:
                # The server counts whole seconds; our own deadline cuts the slice so timeout is exact.
                res = await (poll if math.isinf(remaining) else asyncio.wait_for(poll, remaining))
            except asyncio.TimeoutError:
                continue
            if is_terminal(res.body["job"]):
                return res.body["job"]

    async def submit(self, queue: str, input: Any, options: Dict[str, Any]) -> Tuple[Dict[str, Any], bool]:
        return await self._send(queue, await self._with_attachments(self.entry(input, options), options), 0)

    async def _with_attachments(self, entry: Dict[str, Any], options: Dict[str, Any]) -> Dict[str, Any]:
        """The submit's attachments uploaded first (in parallel), named by their blob ids."""
        sources = options.get("attachments")
        if sources is not None:
            entry["attachments"] = await self.transfer.upload_all(sources, "submit")
        return entry

    async def run(self, queue: str, input: Any, timeout: Optional[float], options: Dict[str, Any]) -> Dict[str, Any]:
        """Submits, with the server holding the answer (?wait=) until the job is terminal, then
        long-polls for the rest: one request when the job finishes within a minute."""
        check_timeout(timeout)
        entry = await self._with_attachments(self.entry(input, options), options)
        loop = asyncio.get_running_loop()
        deadline = math.inf if timeout is None else loop.time() + timeout
        # Whole seconds, rounded down: the server's hold must never outlast our deadline.
        hold = MAX_WAIT_SLICE_SECONDS if math.isinf(deadline) else min(MAX_WAIT_SLICE_SECONDS, math.floor(deadline - loop.time()))
        job, _ = await self._send(queue, entry, max(0, hold))
        if is_terminal(job):
            return job
        remaining = deadline - loop.time()
        return await self.wait(job["id"], None if math.isinf(remaining) else max(0.0, remaining))

    # ---- schedules (PUT /v1/schedules/{name}, …) ----

    async def schedule_put(self, name: str, spec: Dict[str, Any]) -> Dict[str, Any]:
        return (await self.http.request("PUT", schedule_path(name), body=spec, max_attempts=self.attempts)).body["schedule"]

    async def schedule_get(self, name: str) -> Dict[str, Any]:
        return (await self.http.request("GET", schedule_path(name), max_attempts=self.attempts)).body["schedule"]

    async def schedule_list(self, limit: Optional[int], cursor: Optional[str]) -> Tuple[list, Optional[str]]:
        res = await self.http.request("GET", "/v1/schedules", query={"limit": limit, "cursor": cursor}, max_attempts=self.attempts)
        return res.body["schedules"], res.body.get("nextCursor")

    async def schedule_delete(self, name: str) -> None:
        # Sent once: a resent delete would answer 404 for its own success.
        await self.http.request("DELETE", schedule_path(name))

    async def schedule_action(self, name: str, action: str) -> Dict[str, Any]:
        return (await self.http.request("POST", f"{schedule_path(name)}/{action}", max_attempts=self.attempts)).body["schedule"]

    # ---- workers ----

    async def workers(self) -> List[Dict[str, Any]]:
        return (await self.http.request("GET", "/v1/workers", max_attempts=self.attempts)).body["workers"]

    # ---- event streams ----

    def events(self, queue: Optional[str], since: Optional[str], idle_timeout: float) -> AsyncIterator[Dict[str, Any]]:
        return event_stream(self.http, "/v1/events", {"queue": queue}, since, False, idle_timeout)

    def job_events(self, job_id: str, since: Optional[str], idle_timeout: float) -> AsyncIterator[Dict[str, Any]]:
        return event_stream(self.http, job_path(_text("job id", job_id)) + "/events", {}, since, True, idle_timeout)

    def job_output(self, job_id: str, on_new_attempt: Optional[Callable[[int], None]] = None) -> AsyncIterator[Any]:
        return job_output(self.http, job_id, self.job_events(job_id, None, 45.0), on_new_attempt)

    def entry(self, input: Any, options: Dict[str, Any]) -> Dict[str, Any]:
        """A submit's body and its idempotency key: one of our own when the SDK may resend, so a
        resend after a lost answer gives back the same job instead of a second one."""
        entry: Dict[str, Any] = {"input": input}
        for name, wire_name in _SUBMIT_FIELDS.items():
            if options.get(name) is not None:
                entry[wire_name] = options[name]
        run_at = options.get("run_at")
        if run_at is not None:
            entry["runAt"] = _run_at(run_at)
        webhook = options.get("webhook")
        if webhook is not None:
            entry["webhook"] = {"url": webhook} if isinstance(webhook, str) else webhook
        key = options.get("idempotency_key")
        if key is None and self.attempts > 1:
            key = f"sdk-{uuid.uuid4()}"
        if key is not None:
            entry["idempotencyKey"] = _text("idempotency_key", key)
        return entry

    async def _send(self, queue: str, entry: Dict[str, Any], wait_seconds: int) -> Tuple[Dict[str, Any], bool]:
        _text("queue name", queue)
        if self._batchers is None:
            return await submit_alone(self, queue, entry, wait_seconds)
        batcher = self._batchers.get(queue)
        if batcher is None:
            batcher = self._batchers[queue] = SubmitBatcher(self, queue)
        return await batcher.submit(entry, wait_seconds)


def _run_at(value: Any) -> str:
    """A datetime must carry its zone: a naive one would mean the server's time, not the caller's."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("run_at must be a timezone-aware datetime (e.g. datetime.now(timezone.utc)), got a naive one")
        return value.isoformat()
    return _text("run_at", value)


def _text(what: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    return value


__all__ = ["JobsCore", "check_timeout", "is_terminal", "DEFAULT_TIMEOUT_SECONDS", "LONG_POLL_GRACE_SECONDS"]
