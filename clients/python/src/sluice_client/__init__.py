"""sluice_client — submit jobs to a Sluice server, wait for their results, and run workers.

Standard library only. ``Sluice`` blocks; ``AsyncSluice`` is the same API for asyncio.
"""
from .aio import AsyncBlobs, AsyncJobs, AsyncQueue, AsyncSluice
from .attachments import AsyncAttachment, Attachment
from .client import Blobs, Jobs, Queue, Sluice
from .context import BatchContext, JobContext
from .errors import (
    BatchItemError,
    JobCanceledError,
    JobFailedError,
    JobWaitTimeoutError,
    LeaseLostError,
    NonRetryableError,
    RetryableError,
    SluiceApiError,
    SluiceError,
    SluiceNetworkError,
    WorkerClosingError,
)
from .jobs import AsyncJob, Job, JobPage, JobSnapshot, LeasedJob
from ._worker_core import WorkerStats
from .worker import AsyncWorker, Worker

__version__ = "0.1.0"

__all__ = [
    "AsyncAttachment",
    "AsyncBlobs",
    "AsyncJob",
    "AsyncJobs",
    "AsyncQueue",
    "AsyncSluice",
    "AsyncWorker",
    "Attachment",
    "BatchContext",
    "Blobs",
    "BatchItemError",
    "Job",
    "JobCanceledError",
    "JobFailedError",
    "JobContext",
    "JobPage",
    "JobSnapshot",
    "JobWaitTimeoutError",
    "Jobs",
    "LeaseLostError",
    "LeasedJob",
    "NonRetryableError",
    "Queue",
    "RetryableError",
    "Sluice",
    "SluiceApiError",
    "SluiceError",
    "SluiceNetworkError",
    "Worker",
    "WorkerClosingError",
    "WorkerStats",
]
