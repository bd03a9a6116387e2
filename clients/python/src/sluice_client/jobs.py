"""Jobs as the server describes them (docs/jobs-api.md, "The job object"), with snake_case names.

Times are the server's ISO 8601 UTC strings, as sent. ``raw`` is the job object as it came off the
wire, for fields this SDK does not name.
"""
from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Protocol, Tuple, Type

from .attachments import AsyncAttachment, Attachment, Downloader, attachments_of

TERMINAL_STATUSES = frozenset(("succeeded", "failed", "canceled"))


class JobCalls(Protocol):
    """The asyncio client's calls an AsyncJob is bound to (each answers the job's wire object)."""

    transfer: Downloader

    async def get(self, job_id: str) -> Dict[str, Any]: ...

    async def wait(self, job_id: str, timeout: Optional[float]) -> Dict[str, Any]: ...

    async def cancel(self, job_id: str) -> Dict[str, Any]: ...

    def job_output(self, job_id: str, on_new_attempt: Optional[Callable[[int], None]] = None) -> AsyncIterator[Any]: ...


class JobSnapshot:
    """A job's state when the server answered."""

    __slots__ = (
        "raw",
        "id",
        "queue",
        "status",
        "input",
        "output",
        "error",
        "attempt",
        "max_attempts",
        "priority",
        "progress",
        "created_at",
        "started_at",
        "finished_at",
        "updated_at",
        "idempotency_key",
        "metadata",
        "cancel_requested",
        "tenant",
        "requires",
        "depends_on",
        "attachments",
        "output_attachments",
    )

    def __init__(
        self,
        raw: Dict[str, Any],
        transfer: Optional[Downloader] = None,
        loop: Optional[asyncio.AbstractEventLoop] = None,
        kind: Type[Attachment] = Attachment,
    ) -> None:
        self.raw = raw
        self.id: str = raw["id"]
        self.queue: str = raw.get("queue", "")
        self.status: str = raw["status"]
        self.input: Any = raw.get("input")
        self.output: Any = raw.get("output")
        #: The last error, ``{"message": ..., "type": ...}``, if an attempt failed.
        self.error: Optional[Dict[str, Any]] = raw.get("error")
        self.attempt: int = raw.get("attempt", 0)
        self.max_attempts: int = raw.get("maxAttempts", 0)
        self.priority: int = raw.get("priority", 0)
        self.progress: Optional[float] = raw.get("progress")
        self.created_at: Optional[str] = raw.get("createdAt")
        self.started_at: Optional[str] = raw.get("startedAt")
        self.finished_at: Optional[str] = raw.get("finishedAt")
        self.updated_at: Optional[str] = raw.get("updatedAt")
        self.idempotency_key: Optional[str] = raw.get("idempotencyKey")
        self.metadata: Optional[Dict[str, Any]] = raw.get("metadata")
        self.cancel_requested: bool = bool(raw.get("cancelRequested", False))
        self.tenant: Optional[str] = raw.get("tenant")
        #: Labels a worker must carry to run it, as submitted.
        self.requires: Optional[Dict[str, str]] = raw.get("requires")
        self.depends_on: Optional[List[str]] = raw.get("dependsOn")
        #: The job's input files by name (``job.attachments["image"].bytes()``); ``{}`` without.
        self.attachments: Dict[str, Attachment] = attachments_of(raw.get("attachments"), transfer, loop, kind)
        #: The files its worker attached to the result (``ctx.attach``), once it succeeded; ``{}`` without.
        self.output_attachments: Dict[str, Attachment] = attachments_of(raw.get("outputAttachments"), transfer, loop, kind)

    @property
    def terminal(self) -> bool:
        """True once the job is succeeded, failed or canceled."""
        return self.status in TERMINAL_STATUSES

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.queue} {self.status} attempt {self.attempt}>"


class LeasedJob(JobSnapshot):
    """A job handed to a worker's handler: its state plus the lease that proves ownership."""

    __slots__ = ("lease_id", "lease_expires_at", "parents", "trace")

    def __init__(self, raw: Dict[str, Any], transfer: Optional[Downloader] = None, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        super().__init__(raw, transfer, loop)
        self.lease_id: str = raw["leaseId"]
        self.lease_expires_at: Optional[str] = raw.get("leaseExpiresAt")
        #: The W3C trace context the job was submitted with (``{"traceparent", "tracestate"?}``), if any.
        self.trace: Optional[Dict[str, str]] = raw.get("trace")
        # A job with depends_on: its parents as they finished ({id, queue, status, output, error}).
        self.parents: List[Dict[str, Any]] = raw.get("parents") or []


class Job(JobSnapshot):
    """A job returned by the blocking client, with get / wait / cancel bound to it."""

    __slots__ = ("replayed", "_jobs")

    def __init__(self, raw: Dict[str, Any], jobs: "_SyncJobs", replayed: bool = False) -> None:
        super().__init__(raw, *jobs._attachment_binding())
        #: True when the idempotency key matched an earlier submit and this is that same job.
        self.replayed = replayed
        self._jobs = jobs

    def refresh(self) -> "Job":
        """The job as it is now."""
        return self._jobs.get(self.id)

    def wait(self, timeout: Optional[float] = None) -> "Job":
        """Blocks until the job is terminal (long-polling); JobWaitTimeoutError after ``timeout`` seconds."""
        return self._jobs.wait(self.id, timeout=timeout)

    def cancel(self) -> "Job":
        return self._jobs.cancel(self.id)

    def stream(self, on_new_attempt: Optional[Callable[[int], None]] = None) -> Iterator[Any]:
        """``for chunk in job.stream()``: the job's streamed output (its worker's ``ctx.emit``), in
        order from the first chunk, until the job ends; raises JobFailedError if it fails,
        JobCanceledError if canceled. A retry's new attempt calls ``on_new_attempt(n)`` and goes on
        with that attempt's chunks from its first (later chunks of the old one are dropped)."""
        return self._jobs.stream(self.id, on_new_attempt=on_new_attempt)


class AsyncJob(JobSnapshot):
    """A job returned by the asyncio client, with get / wait / cancel bound to it."""

    __slots__ = ("replayed", "_core")

    def __init__(self, raw: Dict[str, Any], core: JobCalls, replayed: bool = False) -> None:
        super().__init__(raw, core.transfer, None, AsyncAttachment)
        self.replayed = replayed
        self._core = core

    async def refresh(self) -> "AsyncJob":
        return AsyncJob(await self._core.get(self.id), self._core)

    async def wait(self, timeout: Optional[float] = None) -> "AsyncJob":
        return AsyncJob(await self._core.wait(self.id, timeout), self._core)

    async def cancel(self) -> "AsyncJob":
        return AsyncJob(await self._core.cancel(self.id), self._core)

    def stream(self, on_new_attempt: Optional[Callable[[int], None]] = None) -> AsyncIterator[Any]:
        """``async for chunk in job.stream()``: as Job.stream."""
        return self._core.job_output(self.id, on_new_attempt)


class JobPage:
    """One page of a queue's jobs, newest first; pass ``next_cursor`` back for the next page."""

    def __init__(self, jobs: List[Any], next_cursor: Optional[str]) -> None:
        self.jobs = jobs
        self.next_cursor = next_cursor

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.jobs)

    def __len__(self) -> int:
        return len(self.jobs)


class _SyncJobs:
    """What a blocking Job needs of its client (implemented by client.Jobs)."""

    def _attachment_binding(self) -> Tuple[Optional[Downloader], Optional[asyncio.AbstractEventLoop]]:  # pragma: no cover - interface
        return None, None

    def get(self, job_id: str) -> Job:  # pragma: no cover - interface
        raise NotImplementedError

    def wait(self, job_id: str, timeout: Optional[float] = None) -> Job:  # pragma: no cover - interface
        raise NotImplementedError

    def cancel(self, job_id: str) -> Job:  # pragma: no cover - interface
        raise NotImplementedError

    def stream(self, job_id: str, on_new_attempt: Optional[Callable[[int], None]] = None) -> Iterator[Any]:  # pragma: no cover - interface
        raise NotImplementedError
