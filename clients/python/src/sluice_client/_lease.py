"""One leased job inside a worker: heartbeats at a third of the lease (a slow inference never
times out while the worker lives), ctx.progress() carried to the server, "cancel requested" or a
lost lease turned into ctx.cancelled, and the outcome reported with retries that outlast a server
restart. Runs on the worker's event loop; only progress() and the context are touched by handler
threads."""
from __future__ import annotations

import asyncio
import math
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ._http import HttpClient
from ._blob_transfer import BlobTransfer
from ._output import OutputStream
from ._output_attachments import OutputAttachments
from ._paths import job_path
from ._retry import Backoff
from ._tasks import spawn
from .errors import JobCanceledError, LeaseLostError, SluiceApiError, WorkerClosingError
from .attachments import Attachment
from .jobs import LeasedJob

if TYPE_CHECKING:
    from ._outcomes import Outcome

# A report is retried this long past the lease's end at most: later, the lease is surely gone.
REPORT_GRACE_SECONDS = 15.0
_HEARTBEAT_BACKOFF = Backoff()

OnError = Callable[[BaseException, str, Optional[str]], None]


class LeaseDeps:
    def __init__(self, http: HttpClient, lease_seconds: int, on_error: OnError, transfer: Optional[BlobTransfer] = None) -> None:
        self.http = http
        #: Reads the job's attachments and uploads the handler's.
        self.transfer = transfer or BlobTransfer(http, 5)
        self.lease_seconds = lease_seconds
        self.on_error = on_error


class JobLease:
    def __init__(self, deps: LeaseDeps, raw: Dict[str, Any]) -> None:
        self.deps = deps
        self.loop = asyncio.get_running_loop()
        self.job = LeasedJob(raw, deps.transfer, self.loop)
        self.heartbeat_interval = max(0.05, deps.lease_seconds / 3)
        self.lease_ends_at = self.loop.time() + deps.lease_seconds
        #: Set when the job's cancel is requested, its lease is lost, or close() runs out of time.
        self.cancelled = threading.Event()
        self.reason: Optional[BaseException] = None
        self.cut = False
        self.lost: Optional[LeaseLostError] = None
        self._listeners: List[Callable[[], None]] = []
        self._progress_lock = threading.Lock()
        self._progress: Optional[float] = None
        self._timer: Optional[asyncio.TimerHandle] = None
        self._stopped = False
        self._failures = 0
        self._output_lock = threading.Lock()
        #: Made on the first ctx.emit(): most jobs stream nothing.
        self._output: Optional[OutputStream] = None
        #: Made on the first ctx.attach().
        self._files: Optional[OutputAttachments] = None
        self._output_blob_ids: Optional[Dict[str, str]] = None

    # -- what handlers touch (any thread) --------------------------------------------------------

    def record_progress(self, fraction: float) -> None:
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or math.isnan(fraction):
            raise TypeError(f"progress must be a number in 0–1, got {fraction!r}")
        with self._progress_lock:
            self._progress = min(1.0, max(0.0, float(fraction)))

    def emit(self, chunk: Any) -> None:
        if self.lost is not None:
            raise self.lost
        with self._output_lock:
            if self._output is None:
                self._output = OutputStream(
                    self.deps.http, self.loop, self.job.id, self.job.attempt, self.job.lease_id,
                    on_cancel_requested=lambda: self.abort(JobCanceledError(self.job.id)),
                    on_lost=self._mark_lost,
                    lease_ends_at=lambda: self.lease_ends_at,
                )  # fmt: skip
            output = self._output
        output.emit(chunk)

    def attach(self, name: str, source: Any, content_type: Optional[str]) -> Attachment:
        """ctx.attach() from a handler's thread: blocks until the upload is stored."""
        return asyncio.run_coroutine_threadsafe(self.aattach(name, source, content_type), self.loop).result()

    async def aattach(self, name: str, source: Any, content_type: Optional[str]) -> Attachment:
        """ctx.aattach() (on the loop)."""
        if self.lost is not None:
            raise self.lost
        if self._files is None:
            self._files = OutputAttachments(self.deps.transfer, self.loop)
        return await self._files.attach(name, source, content_type)

    @property
    def has_output_attachments(self) -> bool:
        """The outcome carries output attachments: it goes through the complete route."""
        return self._files is not None

    async def settle_attachments(self) -> Optional[BaseException]:
        """Before the outcome is reported: every ctx.attach() upload done; the failure of one, if one failed."""
        if self._files is None:
            return None
        self._output_blob_ids, failure = await self._files.settle()
        return failure

    def flush_output(self, timeout: Optional[float] = None) -> None:
        """ctx.flush() from a handler's thread: blocks until the chunks are stored."""
        if self._output is not None:
            asyncio.run_coroutine_threadsafe(self._output.flush(), self.loop).result(timeout)

    async def aflush_output(self) -> None:
        """ctx.aflush() from a coroutine handler (on the loop)."""
        if self._output is not None:
            await self._output.flush()

    async def settle_output(self) -> None:
        """Before the outcome is reported: what the handler emitted is stored first (a failure to is not the handler's)."""
        if self._output is not None:
            try:
                await self._output.flush()
            except Exception:  # noqa: BLE001 - a lost lease is handled by the report
                pass

    def _take_progress(self) -> Optional[float]:
        with self._progress_lock:
            progress, self._progress = self._progress, None
            return progress

    def _restore_progress(self, progress: Optional[float]) -> None:
        with self._progress_lock:
            if self._progress is None:
                self._progress = progress

    # -- the worker's side (the event loop) -------------------------------------------------------

    def on_abort(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def abort(self, reason: BaseException) -> None:
        """Sets ctx.cancelled with ``reason`` unless it is set already (the first reason wins)."""
        if self.reason is not None:
            return
        self.reason = reason
        self.cancelled.set()
        for listener in self._listeners:
            listener()

    def cut_off(self) -> None:
        """close(timeout=) ran out: the handler is told, the lease no longer extended."""
        self.cut = True
        self.abort(WorkerClosingError())
        self.stop_heartbeats()

    def start_heartbeats(self) -> None:
        self._schedule(self.heartbeat_interval)

    def stop_heartbeats(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()

    def _schedule(self, delay: float) -> None:
        if not self._stopped:
            self._timer = self.loop.call_later(delay, lambda: spawn(self._heartbeat()))

    async def _heartbeat(self) -> None:
        if self._stopped:
            return
        progress = self._take_progress()
        body: Dict[str, Any] = {"leaseId": self.job.lease_id, "leaseSeconds": self.deps.lease_seconds}
        if progress is not None:
            body["progress"] = progress
        try:
            # Never wait on a heartbeat longer than the interval: the next one goes out instead.
            res = await self.deps.http.request("POST", job_path(self.job.id) + "/heartbeat", body=body, timeout=self.heartbeat_interval)
        except SluiceApiError as err:
            if self._stopped:
                return
            if err.status < 500 and err.status not in (408, 429):
                # 409 LeaseExpired / LeaseMismatch / JobAlreadyFinished, 404 JobNotFound: the lease
                # is not ours any more; stop, tell the handler, and never report for it.
                if err.status not in (404, 409):
                    self.deps.on_error(err, "heartbeat", self.job.id)
                self._mark_lost(err.code)
                return
            self._retry_soon(err, progress)
            return
        except Exception as err:  # noqa: BLE001 - network trouble: retried
            if not self._stopped:
                self._retry_soon(err, progress)
            return
        self._failures = 0
        self.lease_ends_at = self.loop.time() + self.deps.lease_seconds
        if res.body and res.body.get("cancelRequested"):
            self.abort(JobCanceledError(self.job.id))
        self._schedule(self.heartbeat_interval)

    def _retry_soon(self, err: BaseException, progress: Optional[float]) -> None:
        """Transient (a restarting server): keep the unsent progress and try again sooner than the
        cadence, so the lease is extended before it runs out."""
        self._restore_progress(progress)
        self._failures += 1
        if self._failures == 1:
            self.deps.on_error(err, "heartbeat", self.job.id)
        # Unheard past the lease's end (a partition): the server has ended the lease by now — our
        # estimate of its end is never earlier than the server's — and the job may run elsewhere.
        if self.loop.time() >= self.lease_ends_at:
            self._mark_lost("LeaseExpired")
            return
        self._schedule(min(self.heartbeat_interval, _HEARTBEAT_BACKOFF.delay(self._failures)))

    def _mark_lost(self, code: str) -> None:
        if self.lost is None:
            self.lost = LeaseLostError(self.job.id, code)
        self.stop_heartbeats()
        self.abort(self.lost)

    async def report(self, outcome: "Outcome") -> Optional[str]:
        """Reports the outcome; returns what the server confirmed ("complete", "fail") or None."""
        self.stop_heartbeats()
        if self.lost is not None:
            return None
        lease_id = self.job.lease_id
        if outcome["kind"] == "fail":
            return "fail" if await self._send("fail", "fail", {"leaseId": lease_id, **outcome["failure"]}) else None
        body: Dict[str, Any] = {"leaseId": lease_id, "output": outcome["output"]}
        if self._output_blob_ids is not None:
            body["outputAttachments"] = self._output_blob_ids
        refused = await self._post("complete", body)
        if refused is None:
            return "complete"
        if not (isinstance(refused, SluiceApiError) and refused.status == 413):
            self.deps.on_error(refused, "complete", self.job.id)
            return None
        # Refused as too large: left unreported the job would run again to the same output.
        error = {"message": f"the server refused the handler's output: {refused.message}", "type": refused.code}
        return "fail" if await self._send("fail", "fail", {"leaseId": lease_id, "error": error, "retryable": False}) else None

    def ack_for(self, outcome: "Outcome") -> Optional[Dict[str, Any]]:
        """The outcome as an entry of a lease request's ``complete`` / ``fail`` list (None when the
        lease is lost and nothing may be reported). Stops the heartbeats."""
        self.stop_heartbeats()
        if self.lost is not None:
            return None
        if outcome["kind"] == "complete":
            return {"id": self.job.id, "leaseId": self.job.lease_id, "output": outcome["output"]}
        return {"id": self.job.id, "leaseId": self.job.lease_id, **outcome["failure"]}

    def ack_refused(self, kind: str, error: Dict[str, Any]) -> None:
        code = str(error.get("code", "Unknown"))
        self.deps.on_error(SluiceApiError(code, 404 if code == "JobNotFound" else 409, str(error.get("message", code))), kind, self.job.id)

    async def release(self) -> bool:
        """Hands a job that never started back (queued at once, its attempt given back)."""
        self.stop_heartbeats()
        if self.lost is not None:
            return False
        refused = await self._post("release", {"leaseId": self.job.lease_id})
        if refused is None:
            return True
        # A server from before the release route answers its router's 404: hand the job back as a
        # retryable failure with no delay instead (which there counts an attempt).
        if isinstance(refused, SluiceApiError) and refused.status == 404 and refused.code != "JobNotFound":
            body = {
                "leaseId": self.job.lease_id,
                "error": {"message": "worker shut down before starting the job", "type": "WorkerShutdown"},
                "retryable": True,
                "retryAfterSeconds": 0,
            }
            return await self._send("fail", "release", body)
        self.deps.on_error(refused, "release", self.job.id)
        return False

    async def _send(self, route: str, phase: str, body: Dict[str, Any]) -> bool:
        refused = await self._post(route, body)
        if refused is not None:
            # Not fatal to the worker: the server re-offers the job when the lease ends.
            self.deps.on_error(refused, phase, self.job.id)
        return refused is None

    async def _post(self, route: str, body: Dict[str, Any]) -> Optional[BaseException]:
        """POSTs to one of the job's worker routes, retrying transient failures until the lease has
        surely ended: a server back within that window still gets the result. Returns the error it
        ended on, or None once the server has it."""
        give_up_after = max(0.0, self.lease_ends_at - self.loop.time()) + REPORT_GRACE_SECONDS
        request = self.deps.http.request("POST", f"{job_path(self.job.id)}/{route}", body=body, max_attempts=math.inf)
        try:
            await asyncio.wait_for(request, give_up_after)
            return None
        except asyncio.TimeoutError:
            return TimeoutError(f"gave up reporting job {self.job.id}: the server stayed unreachable past the lease")
        except Exception as err:  # noqa: BLE001 - handed back to the caller
            return err
