"""The worker behind ``queue.work()``, on an event loop: long-poll leases while there is room, run
up to ``concurrency`` handlers (or batches) at once, report each outcome (on the next lease request
when it can, else the job's own route), and on close() stop leasing, let running handlers finish,
and hand back anything leased but not started. The same lease requests, reports and drain as the
TypeScript SDK's worker (docs/sdk-wire-spec.md)."""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ._acks import AckBatcher
from ._core import check_timeout
from ._handler import Handler
from ._http import HttpClient
from ._lease import JobLease, LeaseDeps, OnError
from ._lease_requests import LeaseRequests, check_labels, check_worker_id, is_fatal_lease_error
from ._outcomes import HandlerResult, Outcome, outcome_of, outcomes_of_batch
from ._retry import Backoff
from ._slots import Slot, Slots, WorkUnits
from ._tasks import spawn
from .context import BatchContext, JobContext

log = logging.getLogger("sluice_client.worker")


class WorkerStats:
    """What the worker did, counted once the server confirmed it."""

    __slots__ = ("leased", "completed", "failed", "released", "active")

    def __init__(self) -> None:
        self.leased = 0
        self.completed = 0
        #: Attempts reported failed (retried or not), canceled jobs included.
        self.failed = 0
        #: Jobs handed back by close(): never started, or cut off by its timeout.
        self.released = 0
        #: Jobs whose handler is running now.
        self.active = 0

    def as_dict(self) -> Dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"WorkerStats({self.as_dict()})"


def default_on_error(err: BaseException, phase: str, job_id: Optional[str]) -> None:
    log.warning("%s%s: %s", phase, f" {job_id}" if job_id else "", err)


def _check_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low}–{high}, got {value!r}")
    return value


def batch_setting(batch: Optional[Tuple[int, float]]) -> Optional[Tuple[int, int]]:
    """``batch=(size, window_seconds)`` as (size, window in whole ms), checked."""
    if batch is None:
        return None
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ValueError(f"batch must be (size, window_seconds), got {batch!r}")
    size, window = batch
    _check_int("batch size", size, 1, 100)
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not 0 <= window <= 10:
        raise ValueError(f"batch window must be a number of seconds in 0–10, got {window!r}")
    return size, round(window * 1000)


class WorkerCore:
    """Made on the event loop it runs on."""

    def __init__(
        self,
        http: HttpClient,
        queue: str,
        handler: Callable[..., Any],
        *,
        concurrency: int = 1,
        lease_seconds: int = 30,
        wait_seconds: int = 20,
        batch: Optional[Tuple[int, float]] = None,
        on_error: Optional[OnError] = None,
        labels: Optional[Dict[str, str]] = None,
        worker_id: Optional[str] = None,
    ) -> None:
        _check_int("concurrency", concurrency, 1, 10_000)
        _check_int("lease_seconds", lease_seconds, 1, 43_200)
        _check_int("wait_seconds", wait_seconds, 0, 20)
        self._batch = batch_setting(batch)
        self.queue = queue
        self._on_error = on_error or default_on_error
        self._handler = Handler(handler, concurrency, f"sluice-worker-{queue}")
        self._deps = LeaseDeps(http, lease_seconds, self._on_error)
        self._slots = Slots(concurrency)
        self._units = WorkUnits(self._on_error)
        self._requests = LeaseRequests(http, queue, wait_seconds, lease_seconds, self._batch, check_labels(labels), check_worker_id(worker_id))
        self._acks = AckBatcher(self._slots, self._requests, lambda: self.closing, self._start, self._units.track)
        self._running: Set[JobLease] = set()
        self.stats = WorkerStats()
        self.closing = False
        self._fatal: Optional[BaseException] = None
        self._poll: Optional["asyncio.Task[List[Dict[str, Any]]]"] = None
        self._closed: Optional["asyncio.Task[None]"] = None
        self._backoff = Backoff()
        #: Settles once the worker has stopped and holds nothing; raises the fatal lease error if one stopped it.
        self.done: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        self._loop_task = spawn(self._lease_loop())

    # -- leasing ------------------------------------------------------------------------------

    async def _lease_loop(self) -> None:
        """One long poll at a time, asking for every free slot: jobs it doesn't get come with the
        replacements each ack request asks for."""
        failures = 0
        while not self.closing:
            free = self._slots.free
            if free <= 0:
                await self._slots.wait_for_free()
                continue
            self._slots.reserve(free)
            try:
                self._poll = spawn(self._requests.lease(free))
                jobs = await self._poll
                failures = 0
            except asyncio.CancelledError:
                if self.closing:
                    break
                raise
            except Exception as err:  # noqa: BLE001 - retried, or fatal
                if self.closing:
                    break
                if is_fatal_lease_error(err):
                    # Retrying would only repeat the refusal while the worker looked healthy.
                    self._fatal = err
                    self._on_error(err, "lease", None)
                    spawn(self.close())
                    break
                failures += 1
                # The first failure of an outage, then every 20th retry, not each one.
                if failures % 20 == 1:
                    self._on_error(err, "lease", None)
                await self._sleep_unless_closing(self._backoff.delay(failures - 1))
                continue
            finally:
                self._slots.unreserve(free)
                self._poll = None
            self._start(jobs)

    async def _sleep_unless_closing(self, seconds: float) -> None:
        waiter = spawn(asyncio.sleep(seconds))
        self._poll = waiter  # type: ignore[assignment] - close() cancels it like a poll
        try:
            await waiter
        except asyncio.CancelledError:
            if not self.closing:
                raise

    def _start(self, jobs: List[Dict[str, Any]]) -> None:
        """Runs freshly leased jobs, or hands them back when close() began meanwhile."""
        self.stats.leased += len(jobs)
        leases = [JobLease(self._deps, job) for job in jobs]
        if self.closing:
            # Never started: back at once, their attempts given back; close() waits for it.
            for lease in leases:
                self._units.track(spawn(self._release(lease)), "release")
            return
        if self._batch is not None:
            if leases:
                self._track(lambda slot: self._run_batch(leases), leases)
        else:
            for lease in leases:
                self._track(lambda slot, lease=lease: self._run_one(lease, slot), [lease])

    def _track(self, run: Callable[[Slot], Any], leases: List[JobLease]) -> None:
        slot = self._slots.hold()
        task = spawn(run(slot))
        task.add_done_callback(lambda _: slot.release())
        self._units.track(task, "complete", leases)

    # -- running handlers -------------------------------------------------------------------------

    async def _run_one(self, lease: JobLease, slot: Slot) -> None:
        self._begin([lease])
        result = await self._handler.call(lease.job, JobContext(lease))
        if lease.cut:
            return  # handed back when close() timed out: this late outcome goes nowhere
        await lease.settle_output()  # a follower sees every chunk before the job's end
        attach_failure = await lease.settle_attachments() if lease.has_output_attachments else None
        self._end([lease])
        outcome = outcome_of(HandlerResult(False, error=attach_failure) if attach_failure else result, lease.reason)
        # Output attachments go through the complete route, which takes them on every server that has blobs.
        if self.closing or not self._acks.supported or lease.has_output_attachments:
            await self._finish(lease, outcome)
            return
        # The outcome rides on a lease request that also asks for the next job.
        ack = lease.ack_for(outcome)
        if ack is not None:
            self._count(await self._acks.queue(lease, outcome, ack, slot))

    async def _run_batch(self, leases: List[JobLease]) -> None:
        """Batch outcomes go through the complete / fail routes: the next batch is gathered by a long poll."""
        self._begin(leases)
        result = await self._handler.call([lease.job for lease in leases], BatchContext(leases))
        attach_failures = await asyncio.gather(*(lease.settle_attachments() for lease in leases))
        live = [lease for lease in leases if not lease.cut]
        self._end(live)
        outcomes = outcomes_of_batch(result, [lease.reason for lease in leases])
        outcomes = [
            outcome_of(HandlerResult(False, error=failure), lease.reason) if failure is not None and o["kind"] == "complete" else o
            for lease, o, failure in zip(leases, outcomes, attach_failures)
        ]
        await asyncio.gather(*(self._finish(lease, o) for lease, o in zip(leases, outcomes) if not lease.cut))

    def _begin(self, leases: List[JobLease]) -> None:
        for lease in leases:
            self._running.add(lease)
            lease.start_heartbeats()
        self.stats.active = len(self._running)

    def _end(self, leases: List[JobLease]) -> None:
        for lease in leases:
            self._running.discard(lease)
        self.stats.active = len(self._running)

    def _count(self, confirmed: Optional[str]) -> None:
        if confirmed == "complete":
            self.stats.completed += 1
        elif confirmed == "fail":
            self.stats.failed += 1

    async def _finish(self, lease: JobLease, outcome: Outcome) -> None:
        self._count(await lease.report(outcome))

    async def _release(self, lease: JobLease) -> None:
        if await lease.release():
            self.stats.released += 1

    async def _hand_back(self, lease: JobLease) -> None:
        # outcome_of turns the WorkerClosingError into "retry now" (or "canceled" if that came first).
        if await lease.report(outcome_of(HandlerResult(False, error=lease.reason), lease.reason)) is not None:
            self.stats.released += 1

    # -- closing -----------------------------------------------------------------------------------

    async def close(self, timeout: Optional[float] = None) -> None:
        """Stops leasing, lets running handlers finish and reports their outcomes, hands back jobs
        leased but not started; returns when the worker holds nothing. With ``timeout`` (seconds),
        the jobs whose handlers still run then are handed back (their attempt counts) and no
        longer waited for. Later calls wait for the first call's drain."""
        check_timeout(timeout)
        if self._closed is None:
            self._closed = spawn(self._drain(timeout))
        await asyncio.shield(self._closed)

    async def _drain(self, timeout: Optional[float]) -> None:
        self.closing = True
        if self._poll is not None and not self._poll.done():
            self._poll.cancel()
        self._slots.wake()
        timed_out = asyncio.Event()
        timer = None if timeout is None else asyncio.get_running_loop().call_later(max(0.0, timeout), lambda: self._cut_off(timed_out))
        try:
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._acks.flush()  # what finished as close() began; asks for no jobs now
            timeout_wait = spawn(timed_out.wait())
            while True:
                waited = self._units.waited()
                if not waited:
                    break
                # Units may add units (an ack answer leases a job, which goes back): look again.
                if timed_out.is_set():
                    await asyncio.wait(waited)
                else:
                    await asyncio.wait([*waited, timeout_wait], return_when=asyncio.FIRST_COMPLETED)
            timeout_wait.cancel()
        finally:
            if timer is not None:
                timer.cancel()
            self._handler.shutdown()
            if not self.done.done():
                if self._fatal is not None:
                    self.done.set_exception(self._fatal)
                    self.done.exception()  # retrieved: nobody has to await done
                else:
                    self.done.set_result(None)

    def _cut_off(self, timed_out: asyncio.Event) -> None:
        """close()'s timeout passed: every job whose handler still runs goes back now (through
        fail, not release: the handler ran and may have had effects, so the attempt counts)."""
        for lease in list(self._running):
            lease.cut_off()
            self._units.track(spawn(self._hand_back(lease)), "fail")
        self._end(list(self._running))
        timed_out.set()
