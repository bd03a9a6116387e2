"""Outcomes of finished jobs sent as acks on a lease request that also asks for the next jobs
(one request and one server write, where complete + lease would be two of each). Outcomes of
handlers that finish in the same event-loop iteration share a request."""
from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, List, Optional

from ._lease import JobLease
from ._lease_requests import LeaseRequests, is_acks_unknown_error
from ._outcomes import Outcome
from ._slots import Slot, Slots
from ._tasks import spawn

# Acks one lease request carries at most (the server's limit).
MAX_ACKS_PER_REQUEST = 100


class PendingAck:
    __slots__ = ("lease", "outcome", "ack", "slot", "confirmed")

    def __init__(self, lease: JobLease, outcome: Outcome, ack: Dict[str, Any], slot: Slot) -> None:
        self.lease = lease
        self.outcome = outcome
        self.ack = ack
        self.slot = slot
        self.confirmed: "asyncio.Future[Optional[str]]" = asyncio.get_running_loop().create_future()


class AckBatcher:
    def __init__(
        self,
        slots: Slots,
        requests: LeaseRequests,
        is_closing: Callable[[], bool],
        start: Callable[[List[Dict[str, Any]]], None],
        track: Callable[["asyncio.Future[Any]", str], None],
    ) -> None:
        self._slots = slots
        self._requests = requests
        self._is_closing = is_closing
        self._start = start
        self._track = track
        self._pending: List[PendingAck] = []
        self._scheduled = False
        # Set when a server from before acks refused them: outcomes then go through their own routes.
        self.supported = True

    async def queue(self, lease: JobLease, outcome: Outcome, ack: Dict[str, Any], slot: Slot) -> Optional[str]:
        """Queues the outcome for the next ack request; returns what the server confirmed."""
        pending = PendingAck(lease, outcome, ack, slot)
        self._pending.append(pending)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)
        return await pending.confirmed

    def flush(self) -> None:
        """Sends every queued outcome now (tracked: a request sent as close() begins may still lease jobs)."""
        self._scheduled = False
        while self._pending:
            group = self._pending[:MAX_ACKS_PER_REQUEST]
            del self._pending[:MAX_ACKS_PER_REQUEST]
            self._track(spawn(self._send(group)), "lease")

    async def _send(self, group: List[PendingAck]) -> None:
        """Asks for as many jobs as the outcomes free (none once closing); their slots pass to this
        request's reservation. Without an answer, each outcome goes through its own route (one the
        server did apply then answers 409, which on_error hears as for any lost race)."""
        slots = self._slots
        for a in group:
            a.slot.release(False)
        slots.reserve(len(group))
        ordered = [a for a in group if a.outcome["kind"] == "complete"] + [a for a in group if a.outcome["kind"] == "fail"]
        complete = [a.ack for a in ordered if a.outcome["kind"] == "complete"]
        fail = [a.ack for a in ordered if a.outcome["kind"] == "fail"]
        try:
            answer = await self._requests.ack(0 if self._is_closing() else len(group), complete, fail)
        except Exception as err:  # noqa: BLE001 - each outcome then takes its own route
            if is_acks_unknown_error(err):
                self.supported = False
            slots.unreserve(len(group))
            slots.wake()
            confirmed = await asyncio.gather(*(a.lease.report(a.outcome) for a in ordered))
            for a, c in zip(ordered, confirmed):
                _settle(a, c)
            return
        slots.unreserve(len(group))
        results = answer.get("results") or []
        for i, a in enumerate(ordered):
            result = results[i] if i < len(results) else None
            refused = result is not None and not result.get("ok")
            if refused:
                a.lease.ack_refused(a.outcome["kind"], result.get("error") or {})
            _settle(a, None if refused else a.outcome["kind"])
        jobs = answer.get("jobs") or []
        if len(jobs) < len(group):
            slots.wake()
        self._start(jobs)


def _settle(a: PendingAck, confirmed: Optional[str]) -> None:
    if not a.confirmed.done():
        a.confirmed.set_result(confirmed)
