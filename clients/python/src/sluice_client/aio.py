"""The asyncio client: ``AsyncSluice(url)``, for API servers that run on an event loop (FastAPI,
aiohttp, Starlette). The same calls as the blocking client, awaited; no dependencies either."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

from ._core import JobsCore
from ._retry import Backoff
from ._worker_core import WorkerCore
from .client import _submit_options
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
    ) -> None:
        self._core = JobsCore(url, token, attempts, Backoff(*backoff), batch_submits)
        self.url = url
        self.jobs = AsyncJobs(self._core)

    def queue(self, name: str) -> "AsyncQueue":
        return AsyncQueue(self._core, name)

    async def aclose(self) -> None:
        """Closes idle connections."""
        self._core.http.transport.close_idle()

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
        timeout_seconds: Optional[int] = None,
        max_attempts: Optional[int] = None,
        webhook: Optional[Any] = None,
        metadata: Optional[Dict[str, Any]] = None,
    ) -> AsyncJob:
        options = dict(
            idempotency_key=idempotency_key, priority=priority, delay_seconds=delay_seconds, timeout_seconds=timeout_seconds,
            max_attempts=max_attempts, webhook=webhook, metadata=metadata,
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
    ) -> AsyncWorker:
        """Starts a worker on the running loop (call it from a coroutine). Coroutine handlers run on
        the loop; plain functions in threads of the worker's own."""
        core = WorkerCore(
            self._core.http, self.name, handler, concurrency=concurrency, lease_seconds=lease_seconds,
            wait_seconds=wait_seconds, batch=batch, on_error=on_error,
        )  # fmt: skip
        return AsyncWorker(core)
