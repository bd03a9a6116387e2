"""What a handler gets besides its job(s): cancellation, progress and streamed output."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

if TYPE_CHECKING:
    from .attachments import Attachment
    from ._lease import JobLease
    from .jobs import LeasedJob


class JobContext:
    """``handler(job, ctx)``'s ctx."""

    __slots__ = ("_lease",)

    def __init__(self, lease: "JobLease") -> None:
        self._lease = lease

    @property
    def job(self) -> "LeasedJob":
        return self._lease.job

    @property
    def cancelled(self) -> threading.Event:
        """Set when the job's cancel is requested, its lease is lost, or close(timeout=) runs out:
        stop working (``ctx.cancelled.is_set()``, or ``ctx.cancelled.wait(seconds)`` to sleep)."""
        return self._lease.cancelled

    @property
    def cancel_reason(self) -> Optional[BaseException]:
        """JobCanceledError, LeaseLostError or WorkerClosingError once ``cancelled`` is set."""
        return self._lease.reason

    def progress(self, fraction: float) -> None:
        """Records progress (0–1, clamped); sent with the next heartbeat."""
        self._lease.record_progress(fraction)

    def emit(self, chunk: Any) -> None:
        """Streams one chunk of output (any JSON value: a token, a partial result) to whoever
        follows the job (``job.stream()``): sent in order, at once when no request is in flight,
        else together (up to 1,000 a request) as soon as it is answered. Raises TypeError for what JSON cannot carry, LeaseLostError once the lease is lost."""
        self._lease.emit(chunk)

    def flush(self, timeout: Optional[float] = None) -> None:
        """Blocks until every chunk emitted so far is stored (a blocking handler; the worker also
        flushes before it reports the outcome). Raises LeaseLostError if the lease was lost."""
        self._lease.flush_output(timeout)

    async def aflush(self) -> None:
        """``await ctx.aflush()``: flush() for a coroutine handler."""
        await self._lease.aflush_output()

    @property
    def attachments(self) -> Dict[str, "Attachment"]:
        """The job's input files by name: ``ctx.attachments["image"].bytes()`` (``await …abytes()``
        in a coroutine), or piece by piece with ``stream()`` / ``astream()``; ``{}`` without."""
        return self._lease.job.attachments

    def attach(self, name: str, data: Any, content_type: Optional[str] = None) -> "Attachment":
        """Attaches a file to the job's result (at most 16, names 1–64 of ``[A-Za-z0-9._-]``): bytes,
        a path, a binary file object (read in pieces) or an Attachment; blocks until it is uploaded.
        The job completes with it (``job.output_attachments[name]``); a failed upload fails the
        attempt (retried as a raise would be). The content type is guessed from a path's name."""
        return self._lease.attach(name, data, content_type)

    async def aattach(self, name: str, data: Any, content_type: Optional[str] = None) -> "Attachment":
        """``await ctx.aattach(name, data)``: attach() for a coroutine handler."""
        return await self._lease.aattach(name, data, content_type)


class BatchContext:
    """A batch handler's ctx: one JobContext per job (same order as the jobs), plus the batch's own."""

    __slots__ = ("items", "_cancelled")

    def __init__(self, leases: Sequence["JobLease"]) -> None:
        self.items: List[JobContext] = [JobContext(lease) for lease in leases]
        self._cancelled = threading.Event()
        for lease in leases:
            lease.on_abort(lambda: self._check(leases))
        self._check(leases)

    def _check(self, leases: Sequence["JobLease"]) -> None:
        if all(lease.reason is not None for lease in leases):
            self._cancelled.set()

    @property
    def cancelled(self) -> threading.Event:
        """Set once every job of the batch is canceled or lost, or close(timeout=) ran out."""
        return self._cancelled

    def progress(self, fraction: float) -> None:
        """Records the same progress on every job of the batch."""
        for item in self.items:
            item.progress(fraction)
