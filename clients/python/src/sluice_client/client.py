"""The blocking client: ``Sluice(url)``. Safe to share between threads; calls made at the same
moment by many threads (a threaded web server) share requests where the wire allows it."""
from __future__ import annotations

from datetime import datetime
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar, Union

from ._core import JobsCore
from ._loop_thread import LoopThread
from ._retry import Backoff
from ._worker_core import WorkerCore
from .attachments import Attachment
from .jobs import Job, JobPage, _SyncJobs
from .worker import Worker

T = TypeVar("T")


class Sluice:
    """A Sluice server's jobs API.

    ``attempts``: tries in all for calls that are safe to repeat (reads, cancel, submits — which
    carry an idempotency key of the SDK's own when you give none). ``batch_submits``: gather the
    submits of one moment into one request per queue (each still gets its own job). ``account``:
    act for this account (its 12-digit id, sent as ``Sluice-Account``); only a token of the
    server's own account may name another account.
    """

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        *,
        attempts: int = 5,
        backoff: Tuple[float, float] = (0.1, 5.0),
        batch_submits: bool = True,
        account: Optional[str] = None,
    ) -> None:
        self._core = JobsCore(url, token, attempts, Backoff(*backoff), batch_submits, account)
        self.url = url
        self.jobs = Jobs(self._core)
        self.schedules = Schedules(self._core)
        self.blobs = Blobs(self._core)

    def events(self, queue: Optional[str] = None, *, since: Optional[str] = None, idle_timeout: float = 45.0) -> Iterator[Dict[str, Any]]:
        """Every job's events (one queue's with ``queue``), from now on or after the event id
        ``since``: ``{"id", "type", "at", "job"}`` dicts, for as long as you iterate. Reconnects by
        itself and resumes where it was (Last-Event-ID): nothing missed, nothing twice."""
        return _blocking(self._core.events(queue, since, idle_timeout))

    @property
    def _loop(self) -> LoopThread:
        # Looked up per call, not kept: a client made before a fork (a pre-forking web server's
        # master) then works in each child, on a loop thread of the child's own.
        return LoopThread.shared()

    def queue(self, name: str) -> "Queue":
        return Queue(self, name)

    def workers(self) -> List[Dict[str, Any]]:
        """The workers seen in the last 60 s, on every node (``GET /v1/workers``): dicts of
        ``workerId``, ``queues``, ``labels``, ``lastSeenAt`` and ``running``, by worker id."""
        return self._loop.call(self._core.workers())

    def close(self) -> None:
        """Closes idle connections (workers have their own close())."""
        self._loop.loop.call_soon_threadsafe(self._core.http.transport.close_idle)
        self._loop.loop.call_soon_threadsafe(self._core.transfer.urls.close_idle)

    def __enter__(self) -> "Sluice":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Jobs(_SyncJobs):
    """Jobs by id: ``sluice.jobs.get / wait / cancel``, and a queue's jobs with ``list``."""

    def __init__(self, core: JobsCore) -> None:
        self._core = core

    @property
    def _loop(self) -> LoopThread:
        return LoopThread.shared()

    def _job(self, raw: Dict[str, Any], replayed: bool = False) -> Job:
        return Job(raw, self, replayed)

    def _attachment_binding(self) -> Tuple[Any, Any]:
        return self._core.transfer, LoopThread.shared().loop

    def get(self, job_id: str) -> Job:
        return self._job(self._loop.call(self._core.get(job_id)))

    def wait(self, job_id: str, timeout: Optional[float] = None) -> Job:
        """Blocks until the job is terminal; JobWaitTimeoutError (with the last state) after ``timeout`` seconds."""
        return self._job(self._loop.call(self._core.wait(job_id, timeout)))

    def cancel(self, job_id: str) -> Job:
        """A queued job is canceled at once; a running one is asked to stop (its worker sees it)."""
        return self._job(self._loop.call(self._core.cancel(job_id)))

    def list(self, queue: str, status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> JobPage:
        jobs, next_cursor = self._loop.call(self._core.list(queue, status, limit, cursor))
        return JobPage([self._job(raw) for raw in jobs], next_cursor)

    def events(self, job_id: str, *, since: Optional[str] = None, idle_timeout: float = 45.0) -> Iterator[Dict[str, Any]]:
        """The job's events: a ``job.snapshot`` first (unless resuming with ``since``), then each
        change; ends after its terminal event."""
        return _blocking(self._core.job_events(job_id, since, idle_timeout))

    def stream(self, job_id: str, on_new_attempt: Optional[Callable[[int], None]] = None) -> Iterator[Any]:
        """The job's streamed output until it ends (see Job.stream)."""
        return _blocking(self._core.job_output(job_id, on_new_attempt))


class Blobs:
    """``sluice.blobs``: upload a file ahead of the job it goes to (a blob belongs to one job), or look one up by id."""

    def __init__(self, core: JobsCore) -> None:
        self._core = core

    def upload(self, data: Any, *, content_type: Optional[str] = None) -> Attachment:
        """Uploads ``data`` (bytes, a path, a binary file object) as a new blob, streamed; a submit's
        ``attachments`` take the Attachment it returns as it is (a blob belongs to one job)."""
        loop = LoopThread.shared()
        return Attachment(loop.call(self._core.transfer.upload_source(data, "upload", content_type)), self._core.transfer, loop.loop)

    def get(self, blob_id: str) -> Attachment:
        """The uploaded blob ``blob_id`` (``GET /v1/blobs/{id}``), with a fresh download URL."""
        loop = LoopThread.shared()
        return Attachment(loop.call(self._core.transfer.info(blob_id)), self._core.transfer, loop.loop)


class Schedules:
    """``sluice.schedules``: jobs submitted on a cron expression or an interval. Schedules are
    dicts as the server answers them (``nextRuns`` included)."""

    def __init__(self, core: JobsCore) -> None:
        self._core = core

    @property
    def _loop(self) -> LoopThread:
        return LoopThread.shared()

    def put(self, name: str, queue: str, input: Any, *, cron: Optional[str] = None, every_seconds: Optional[int] = None,
            timezone: Optional[str] = None, options: Optional[Dict[str, Any]] = None, catch_up: Optional[str] = None) -> Dict[str, Any]:  # fmt: skip
        """Creates or replaces the schedule: give ``cron`` (5 or 6 fields) or ``every_seconds``."""
        return self._loop.call(self._core.schedule_put(name, schedule_spec(queue, input, cron, every_seconds, timezone, options, catch_up)))

    def get(self, name: str) -> Dict[str, Any]:
        return self._loop.call(self._core.schedule_get(name))

    def list(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Tuple[List[Dict[str, Any]], Optional[str]]:
        """One page, by name: ``(schedules, next_cursor)``."""
        return self._loop.call(self._core.schedule_list(limit, cursor))

    def delete(self, name: str) -> None:
        self._loop.call(self._core.schedule_delete(name))

    def pause(self, name: str) -> Dict[str, Any]:
        return self._loop.call(self._core.schedule_action(name, "pause"))

    def resume(self, name: str) -> Dict[str, Any]:
        return self._loop.call(self._core.schedule_action(name, "resume"))


def schedule_spec(queue: str, input: Any, cron: Optional[str], every_seconds: Optional[int], timezone: Optional[str],
                  options: Optional[Dict[str, Any]], catch_up: Optional[str]) -> Dict[str, Any]:  # fmt: skip
    """The PUT body, with only what was given (the server checks the rest, naming what is wrong)."""
    spec: Dict[str, Any] = {"queue": queue, "input": input}
    for wire_name, value in (("cron", cron), ("everySeconds", every_seconds), ("timezone", timezone), ("options", options), ("catchUp", catch_up)):
        if value is not None:
            spec[wire_name] = value
    return spec


def _blocking(stream: AsyncIterator[T]) -> Iterator[T]:
    """An async stream, iterated from a blocking caller through the client's loop thread."""
    loop = LoopThread.shared()

    async def step() -> T:
        return await stream.__anext__()

    async def close() -> None:
        await stream.aclose()  # type: ignore[attr-defined]

    try:
        while True:
            try:
                yield loop.call(step())
            except StopAsyncIteration:
                return
    finally:
        loop.call(close())


class Queue:
    """``sluice.queue(name)``: submit jobs to one queue, list them, run workers on it."""

    def __init__(self, sluice: Sluice, name: str) -> None:
        self._sluice = sluice
        self.name = name

    def submit(
        self,
        input: Any,
        *,
        idempotency_key: Optional[str] = None,
        priority: Optional[int] = None,
        delay_seconds: Optional[int] = None,
        run_at: Optional[Union[datetime, str]] = None,
        timeout_seconds: Optional[int] = None,
        max_attempts: Optional[int] = None,
        webhook: Optional[Any] = None,
        metadata: Optional[Dict[str, Any]] = None,
        tenant: Optional[str] = None,
        depends_on: Optional[List[str]] = None,
        on_parent_failure: Optional[str] = None,
        requires: Optional[Dict[str, str]] = None,
        attachments: Optional[Dict[str, Any]] = None,
    ) -> Job:
        """Submits a job; returns it at once (status ``queued``; ``waiting`` with ``depends_on``, job
        ids that must succeed first). The same idempotency key and input give back the same job
        (``job.replayed``). ``tenant``: who the job is for (fair sharing within the queue). ``run_at``: a
        timezone-aware datetime (or RFC 3339 text) when the job may first run, up to 365 days ahead.
        ``requires``: labels a worker must carry to run the job, e.g. ``{"gpu": "a100"}``.
        ``attachments``: files by name (at most 16; names of ``[A-Za-z0-9._-]``) — bytes, a path
        (str or pathlib.Path), a binary file object (read in pieces, never whole), or a blob
        uploaded ahead (``sluice.blobs.upload``) — uploaded before the submit; the worker reads them as ``ctx.attachments[name]``."""
        options = dict(
            idempotency_key=idempotency_key, priority=priority, delay_seconds=delay_seconds, run_at=run_at, timeout_seconds=timeout_seconds,
            max_attempts=max_attempts, webhook=webhook, metadata=metadata, tenant=tenant, depends_on=depends_on,
            on_parent_failure=on_parent_failure, requires=requires, attachments=attachments,
        )  # fmt: skip
        raw, replayed = self._sluice._loop.call(self._sluice._core.submit(self.name, input, options))
        return Job(raw, self._sluice.jobs, replayed)

    def run(self, input: Any, *, timeout: Optional[float] = None, **options: Any) -> Job:
        """Submits and returns the finished job (succeeded, failed or canceled) — one request when
        it finishes within a minute. JobWaitTimeoutError after ``timeout`` seconds; the job goes on."""
        raw = self._sluice._loop.call(self._sluice._core.run(self.name, input, timeout, _submit_options(options)))
        return Job(raw, self._sluice.jobs)

    def list(self, status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> JobPage:
        return self._sluice.jobs.list(self.name, status, limit, cursor)

    def work(
        self,
        handler: Callable[..., Any],
        *,
        concurrency: int = 1,
        lease_seconds: int = 30,
        wait_seconds: int = 20,
        batch: Optional[Tuple[int, float]] = None,
        on_error: Optional[Callable[[BaseException, str, Optional[str]], None]] = None,
        labels: Optional[Dict[str, str]] = None,
        worker_id: Optional[str] = None,
    ) -> Worker:
        """Starts a worker on this queue at once. ``handler(job)`` or ``handler(job, ctx)`` returns
        the job's output; with ``batch=(size, window_seconds)`` it gets a list of jobs and returns
        one result per job. ``labels``: the worker's (it also leases the jobs whose ``requires`` they
        contain); ``worker_id`` names it in ``GET /v1/workers`` (default: one id per process)."""
        sluice = self._sluice

        async def make() -> WorkerCore:
            return WorkerCore(
                sluice._core.http, self.name, handler, concurrency=concurrency, lease_seconds=lease_seconds,
                wait_seconds=wait_seconds, batch=batch, on_error=on_error, labels=labels, worker_id=worker_id,
            )  # fmt: skip

        loop = sluice._loop
        return Worker(loop, loop.call(make()))


_SUBMIT_OPTIONS = frozenset(
    ("idempotency_key", "priority", "delay_seconds", "run_at", "timeout_seconds", "max_attempts", "webhook", "metadata", "tenant", "depends_on", "on_parent_failure", "requires", "attachments")
)


def _submit_options(options: Dict[str, Any]) -> Dict[str, Any]:
    unknown = set(options) - _SUBMIT_OPTIONS
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(sorted(unknown))}; run() takes timeout and submit()'s options")
    return options
