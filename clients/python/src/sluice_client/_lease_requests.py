"""The worker's two kinds of ``POST /v1/queues/{queue}/leases``: a long poll for jobs, and a
request reporting finished jobs (acks) that asks for their replacements without waiting."""
from __future__ import annotations

import uuid
from typing import Any, Dict, List, Optional, Tuple

from ._http import HttpClient
from ._paths import queue_path
from .errors import SluiceApiError

_LONG_POLL_GRACE_SECONDS = 30.0


class LeaseRequests:
    def __init__(
        self, http: HttpClient, queue: str, wait_seconds: int, lease_seconds: int, batch: Optional[Tuple[int, int]], labels: Optional[Dict[str, str]], worker_id: str
    ) -> None:
        self._http = http
        #: Sent with every lease request, the acks' included (they lease replacements).
        self._labels = labels
        self._worker_id = worker_id
        #: False once a server from before the workers list refused ``workerId`` as unknown.
        self._worker_id_taken = True
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
        res = await self._send(body, self._wait_seconds + window_ms / 1000 + _LONG_POLL_GRACE_SECONDS)
        return res.body["jobs"]

    def _identity(self) -> Dict[str, Any]:
        identity: Dict[str, Any] = {} if not self._labels else {"labels": self._labels}
        if self._worker_id_taken:
            identity["workerId"] = self._worker_id
        return identity

    async def _send(self, body: Dict[str, Any], timeout: float) -> Any:
        """A server that refuses ``workerId`` as an unknown field (it predates the workers list) gets
        the request again without it, and never again with it; labels it refuses stay an error."""
        try:
            return await self._http.request("POST", self._path, body={**body, **self._identity()}, timeout=timeout)
        except SluiceApiError as err:
            if not self._worker_id_taken or not is_worker_id_unknown_error(err):
                raise
            self._worker_id_taken = False
            return await self._http.request("POST", self._path, body={**body, **self._identity()}, timeout=timeout)

    async def ack(self, max_jobs: int, complete: List[Dict[str, Any]], fail: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Reports these acks (``results`` come back complete entries first) and leases up to
        ``max_jobs`` jobs without waiting."""
        body = {"max": max_jobs, "waitSeconds": 0, "leaseSeconds": self._lease_seconds, "complete": complete, "fail": fail}
        res = await self._send(body, _LONG_POLL_GRACE_SECONDS)
        return res.body


_process_worker_id: Optional[str] = None


def process_worker_id() -> str:
    """This process's worker id: made once, shared by every worker it runs that was not given one."""
    global _process_worker_id
    if _process_worker_id is None:
        _process_worker_id = f"worker-{uuid.uuid4().hex[:8]}"
    return _process_worker_id


def check_labels(labels: Optional[Dict[str, str]]) -> Optional[Dict[str, str]]:
    """The shape the server takes (it checks each key's alphabet and length, and answers a 400)."""
    if labels is None:
        return None
    if not isinstance(labels, dict):
        raise TypeError(f"labels must be a dict of str to str, got {type(labels).__name__}")
    if len(labels) > 16:
        raise ValueError(f"labels has {len(labels)} pairs; at most 16 are allowed")
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"labels must map str to str, got {key!r}: {value!r}")
    return dict(labels)


def check_worker_id(worker_id: Optional[str]) -> str:
    if worker_id is None:
        return process_worker_id()
    if not isinstance(worker_id, str) or not 1 <= len(worker_id) <= 128:
        raise ValueError(f"worker_id must be a str of 1–128 characters, got {worker_id!r}")
    return worker_id


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


def is_worker_id_unknown_error(err: BaseException) -> bool:
    """The 400 a server from before the workers list answers a lease request naming its worker."""
    return isinstance(err, SluiceApiError) and err.status == 400 and ("body.workerId is not a field" in err.message or 'unknown field "workerId"' in err.message)
