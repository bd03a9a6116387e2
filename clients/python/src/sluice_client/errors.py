"""Errors the SDK raises, and errors a handler raises to tell the worker what to do with its job."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:
    from .jobs import JobSnapshot

# The fail route's limit on a retry delay (12 h, as SQS's visibility timeout).
MAX_RETRY_AFTER_SECONDS = 43_200


class SluiceError(Exception):
    """Base of every error the SDK itself raises."""


class SluiceApiError(SluiceError):
    """The server answered ``{"error": {"code", "message"}}``; ``code`` is stable, match on it."""

    def __init__(self, code: str, status: int, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        #: Seconds the answer's Retry-After asked to wait (a 429 / 503), if it had one.
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}"


class SluiceNetworkError(SluiceError, ConnectionError):
    """The server could not be reached (refused, reset, timed out) even after the SDK's retries."""


class JobWaitTimeoutError(SluiceError, TimeoutError):
    """``wait(timeout=)`` or ``run(timeout=)`` ran out of time; ``job`` is the last state seen."""

    def __init__(self, job: "JobSnapshot") -> None:
        super().__init__(f"job {job.id} is still {job.status} after the wait timeout")
        self.job = job


def _check_retry_after(value: Optional[int]) -> Optional[int]:
    """A delay the server would refuse is refused here, where it is made, not when the report is sent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRY_AFTER_SECONDS:
        raise ValueError(
            f"retry_after_seconds must be a whole number of seconds in 0–{MAX_RETRY_AFTER_SECONDS}, "
            f"got {value!r} (round it up: math.ceil)"
        )
    return value


class NonRetryableError(Exception):
    """Raise from a handler to fail the job at once: no retry, straight to ``failed`` (and the DLQ)."""


class RetryableError(Exception):
    """Raise from a handler to retry the job after ``retry_after_seconds`` (e.g. a rate limit's
    Retry-After). Any other exception is retried too, after the queue's backoff."""

    def __init__(self, message: str, retry_after_seconds: Optional[int] = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = _check_retry_after(retry_after_seconds)


class BatchItemError(Exception):
    """Put one in a batch handler's result list, at a job's position, to fail that job alone."""

    def __init__(self, message: str, retryable: bool = True, retry_after_seconds: Optional[int] = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after_seconds = _check_retry_after(retry_after_seconds)


class JobFailedError(SluiceError):
    """What ``job.stream()`` raises when the job failed: ``error`` is its last error
    (``{"message", "type"}``), ``job`` its last state as the server sent it."""

    def __init__(self, job: Dict[str, Any]) -> None:
        error = job.get("error") or None
        super().__init__(f"job {job.get('id')} failed" + (f": {error.get('message')}" if error else ""))
        self.job_id = job.get("id")
        self.error = error
        self.job = job


class JobCanceledError(SluiceError):
    """``ctx.cancel_reason`` when the job's cancel was requested while it ran; what
    ``job.stream()`` raises when the job was canceled."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id} was canceled")
        self.job_id = job_id


class LeaseLostError(SluiceError):
    """``ctx.cancel_reason`` when the worker no longer holds the job's lease (expired or taken)."""

    def __init__(self, job_id: str, code: str) -> None:
        super().__init__(f"lost the lease on job {job_id} ({code})")
        self.job_id = job_id
        self.code = code


class WorkerClosingError(SluiceError):
    """``ctx.cancel_reason`` when ``worker.close(timeout=)`` ran out of patience."""

    def __init__(self) -> None:
        super().__init__("the worker is closing and its drain timeout passed")
