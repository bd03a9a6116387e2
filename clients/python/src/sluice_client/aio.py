"""The asyncio client: ``AsyncSluice(url)``, for API servers that run on an event loop (FastAPI,
aiohttp, Starlette). The same calls as the blocking client, awaited; no dependencies either."""
from __future__ import annotations

from datetime import datetime
from typing import Any, AsyncIterator, Callable, Dict, List, Optional, Tuple, Union

from ._core import JobsCore
from ._retry import Backoff
from ._worker_core import WorkerCore
from .client import _submit_options, schedule_spec
from .attachments import AsyncAttachment
from .jobs import AsyncJob, JobPage
from .worker import AsyncWorker


class AsyncSluice:
    """As Sluice, on the running event loop. Submits made in one loop iteration for one queue
    share one request (each still gets its own job)."""

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
        self.jobs = AsyncJobs(self._core)
        self.schedules = AsyncSchedules(self._core)
        self.blobs = AsyncBlobs(self._core)

    def events(self, queue: Optional[str] = None, *, since: Optional[str] = None, idle_timeout: float = 45.0) -> AsyncIterator[Dict[str, Any]]:
        """As Sluice.events: ``async for event in sluice.events(queue="embed")``."""
        return self._core.events(queue, since, idle_timeout)

    def queue(self, name: str) -> "AsyncQueue":
        return AsyncQueue(self._core, name)

    async def workers(self) -> List[Dict[str, Any]]:
        """As Sluice.workers."""
        return await self._core.workers()

    async def aclose(self) -> None:
        """Closes idle connections."""
        self._core.http.transport.close_idle()
        self._core.transfer.urls.close_idle()

    async def __aenter__(self) -> "AsyncSluice":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncJobs:
    def __init__(self, core: JobsCore) -> None:
        self._core = core

    async def get(self, job_id: str) -> AsyncJob:
        return AsyncJob(await self._core.get(job_id), self._core)

    async def wait(self, job_id: str, timeout: Optional[float] = None) -> AsyncJob:
        return AsyncJob(await self._core.wait(job_id, timeout), self._core)

    async def cancel(self, job_id: str) -> AsyncJob:
        return AsyncJob(await self._core.cancel(job_id), self._core)

    async def list(self, queue: str, status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> JobPage:
        jobs, next_cursor = await self._core.list(queue, status, limit, cursor)
        return JobPage([AsyncJob(raw, self._core) for raw in jobs], next_cursor)

    def events(self, job_id: str, *, since: Optional[str] = None, idle_timeout: float = 45.0) -> AsyncIterator[Dict[str, Any]]:
        """The job's events, ending after its terminal one."""
        return self._core.job_events(job_id, since, idle_timeout)

    def stream(self, job_id: str, on_new_attempt: Optional[Callable[[int], None]] = None) -> AsyncIterator[Any]:
        """The job's streamed output until it ends (see Job.stream)."""
        return self._core.job_output(job_id, on_new_attempt)


class AsyncBlobs:
    """As Sluice.blobs, awaited."""

    def __init__(self, core: JobsCore) -> None:
        self._core = core

    async def upload(self, data: Any, *, content_type: Optional[str] = None) -> AsyncAttachment:
        return AsyncAttachment(await self._core.transfer.upload_source(data, "upload", content_type), self._core.transfer, None)

    async def get(self, blob_id: str) -> AsyncAttachment:
        return AsyncAttachment(await self._core.transfer.info(blob_id), self._core.transfer, None)


class AsyncSchedules:
    """As Sluice.schedules, awaited."""

    def __init__(self, core: JobsCore) -> None:
        self._core = core

    async def put(self, name: str, queue: str, input: Any, *, cron: Optional[str] = None, every_seconds: Optional[int] = None,
                  timezone: Optional[str] = None, options: Optional[Dict[str, Any]] = None, catch_up: Optional[str] = None) -> Dict[str, Any]:  # fmt: skip
        return await self._core.schedule_put(name, schedule_spec(queue, input, cron, every_seconds, timezone, options, catch_up))

    async def get(self, name: str) -> Dict[str, Any]:
        return await self._core.schedule_get(name)

    async def list(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Tuple[List[Dict[str, Any]], Optional[str]]:
        return await self._core.schedule_list(limit, cursor)

    async def delete(self, name: str) -> None:
        await self._core.schedule_delete(name)

    async def pause(self, name: str) -> Dict[str, Any]:
        return await self._core.schedule_action(name, "pause")

    async def resume(self, name: str) -> Dict[str, Any]:
        return await self._core.schedule_action(name, "resume")


class AsyncQueue:
    def __init__(self, core: JobsCore, name: str) -> None:
        self._core = core
        self.name = name

    async def submit(
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
    ) -> AsyncJob:
        options = dict(
            idempotency_key=idempotency_key, priority=priority, delay_seconds=delay_seconds, run_at=run_at, timeout_seconds=timeout_seconds,
            max_attempts=max_attempts, webhook=webhook, metadata=metadata, tenant=tenant, depends_on=depends_on,
            on_parent_failure=on_parent_failure, requires=requires, attachments=attachments,
        )  # fmt: skip
        raw, replayed = await self._core.submit(self.name, input, options)
        return AsyncJob(raw, self._core, replayed)

    async def run(self, input: Any, *, timeout: Optional[float] = None, **options: Any) -> AsyncJob:
        return AsyncJob(await self._core.run(self.name, input, timeout, _submit_options(options)), self._core)

    async def list(self, status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> JobPage:
        jobs, next_cursor = await self._core.list(self.name, status, limit, cursor)
        return JobPage([AsyncJob(raw, self._core) for raw in jobs], next_cursor)

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
    ) -> AsyncWorker:
        """Starts a worker on the running loop (call it from a coroutine). Coroutine handlers run on
        the loop; plain functions in threads of the worker's own."""
        core = WorkerCore(
            self._core.http, self.name, handler, concurrency=concurrency, lease_seconds=lease_seconds,
            wait_seconds=wait_seconds, batch=batch, on_error=on_error, labels=labels, worker_id=worker_id,
        )  # fmt: skip
        return AsyncWorker(core)
