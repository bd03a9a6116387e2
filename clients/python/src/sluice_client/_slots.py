"""The worker's handler slots (``concurrency`` of them): held by running handlers, reserved by
lease requests in flight for the jobs they may bring, and waited for by the lease loop when none
is free. Also the units of work close() waits for. Event-loop only."""
from __future__ import annotations

import asyncio
from typing import Any, Callable, List, Sequence, Set, Tuple

from ._lease import JobLease, OnError


class Slot:
    """Held while its job runs, then released once — or handed to the lease request reporting it."""

    __slots__ = ("_released", "_on_release")

    def __init__(self, on_release: Callable[[bool], None]) -> None:
        self._released = False
        self._on_release = on_release

    def release(self, wake: bool = True) -> None:
        if self._released:
            return
        self._released = True
        self._on_release(wake)


class Slots:
    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self.held = 0
        self.reserved = 0
        self._waiters: List["asyncio.Future[None]"] = []

    @property
    def free(self) -> int:
        return self.concurrency - self.held - self.reserved

    def reserve(self, count: int) -> None:
        self.reserved += count

    def unreserve(self, count: int) -> None:
        self.reserved -= count

    def hold(self) -> Slot:
        self.held += 1

        def on_release(wake: bool) -> None:
            self.held -= 1
            if wake:
                self.wake()

        return Slot(on_release)

    async def wait_for_free(self) -> None:
        waiter: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


class WorkUnits:
    """Everything close() waits for — handlers with their reports, ack requests, hand-backs — each
    with the leases whose handler it runs: once close()'s timeout has cut all of a unit's handlers
    off, it is no longer waited for."""

    def __init__(self, on_error: OnError) -> None:
        self._on_error = on_error
        self._units: Set[Tuple["asyncio.Future[Any]", Tuple[JobLease, ...]]] = set()

    def track(self, unit: "asyncio.Future[Any]", phase: str, leases: Sequence[JobLease] = ()) -> None:
        entry = (unit, tuple(leases))
        self._units.add(entry)

        def done(f: "asyncio.Future[Any]") -> None:
            self._units.discard(entry)
            # Units report their own failures; one raised here is a bug in the worker itself.
            if not f.cancelled() and f.exception() is not None:
                self._on_error(f.exception(), phase, None)  # type: ignore[arg-type]

        unit.add_done_callback(done)

    def waited(self) -> List["asyncio.Future[Any]"]:
        return [unit for unit, leases in self._units if not (leases and all(lease.cut for lease in leases))]
