"""The worker's two kinds of ``POST /v1/queues/{queue}/leases``: a long poll for jobs, and a
request reporting finished jobs (acks) that asks for their replacements without waiting."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ._http import HttpClient
from ._paths import queue_path
from .errors import SluiceApiError

_LONG_POLL_GRACE_SECONDS = 30.0


class LeaseRequests:
    def __init__(self, http: HttpClient, queue: str, wait_seconds: int, lease_seconds: int, batch: Optional[Tuple[int, int]]) -> None:
        self._http = http
        self._path = queue_path(queue) + "/leases"
        self._wait_seconds = wait_seconds
        self._lease_seconds = lease_seconds
        #: (size, window in ms) for a batch handler.
        self._batch = batch

    async def lease(self, free: int) -> List[Dict[str, Any]]:
        """Long-polls for up to ``free`` jobs (a batch handler: a whole batch)."""
        body: Dict[str, Any] = {
            "max": self._batch[0] if self._batch else min(free, 100),
            "waitSeconds": self._wait_seconds,
            "leaseSeconds": self._lease_seconds,
        }
        window_ms = 0
        if self._batch:
            window_ms = self._batch[1]
            body["batchWindowMs"] = window_ms
        res = await self._http.request("POST", self._path, body=body, timeout=self._wait_seconds + window_ms / 1000 + _LONG_POLL_GRACE_SECONDS)
        return res.body["jobs"]

    async def ack(self, max_jobs: int, complete: List[Dict[str, Any]], fail: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Reports these acks (``results`` come back complete entries first) and leases up to
        ``max_jobs`` jobs without waiting."""
        body = {"max": max_jobs, "waitSeconds": 0, "leaseSeconds": self._lease_seconds, "complete": complete, "fail": fail}
        res = await self._http.request("POST", self._path, body=body, timeout=_LONG_POLL_GRACE_SECONDS)
        return res.body


def is_fatal_lease_error(err: BaseException) -> bool:
    """A refusal no retry fixes (a queue name the server refuses, a wrong token, a URL that isn't a
    Sluice server). 408 and 429 ask for a retry; QueueDeletedRecently ends within a minute."""
    return (
        isinstance(err, SluiceApiError)
        and 400 <= err.status < 500
        and err.status not in (408, 429)
        and err.code != "QueueDeletedRecently"
    )


def is_acks_unknown_error(err: BaseException) -> bool:
    """The 400 of a server from before acks: ``complete`` / ``fail`` named as unknown fields."""
    if not (isinstance(err, SluiceApiError) and err.status == 400):
        return False
    message = err.message
    return any(
        marker in message
        for marker in ("body.complete is not a field", "body.fail is not a field", 'unknown field "complete"', 'unknown field "fail"')
    )
