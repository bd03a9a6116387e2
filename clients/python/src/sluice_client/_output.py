"""ctx.emit(): a running job's streamed output, buffered and sent in order as
``POST /v1/jobs/{id}/output``, one request in flight at a time: what is emitted while none is goes
at once; what is emitted meanwhile goes, up to the server's 1,000 chunks a request, as soon as the
request before it is answered (batches form from the wait alone; a window would add latency; a slow
answer lets more gather, so a backlog drains in big requests instead of growing behind small ones). Handlers call
emit() from their thread (or the loop); the sends run on the worker's event loop. A request that
failed in flight is checked against the server's count before it is sent again, so a chunk is
never stored twice."""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Callable, List, Optional, Tuple

from ._http import HttpClient, is_retryable
from ._paths import job_path
from ._retry import Backoff
from .errors import LeaseLostError, SluiceApiError

#: Chunks that go at once when no request is in flight.
BATCH_CHUNKS = 100
#: Chunks one request carries at most: the server's limit.
REQUEST_CHUNKS = 1000
#: Bytes of JSON one request carries at most (under the server's 1 MiB, with room for the envelope).
_REQUEST_BYTES_MAX = 1_000_000
_BACKOFF = Backoff()


class OutputStream:
    def __init__(
        self,
        http: HttpClient,
        loop: asyncio.AbstractEventLoop,
        job_id: str,
        attempt: int,
        lease_id: str,
        on_cancel_requested: Callable[[], None],
        on_lost: Callable[[str], None],
        lease_ends_at: Callable[[], float],
    ) -> None:
        self._http = http
        self._loop = loop
        self._job_id = job_id
        self._attempt = attempt
        self._lease_id = lease_id
        self._on_cancel_requested = on_cancel_requested
        self._on_lost = on_lost
        self._lease_ends_at = lease_ends_at
        self._lock = threading.Lock()
        self._buffer: List[Tuple[Any, int]] = []
        self._send_requested = False
        # A request is in flight: what is emitted now goes when it is answered.
        self._draining = False
        self._stored = 0
        self._failure: Optional[BaseException] = None
        # Sends run one after another on the loop; each drains what is buffered when it runs.
        self._sending: Optional["asyncio.Future[None]"] = None

    # -- any thread ---------------------------------------------------------------------------------

    def emit(self, chunk: Any) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            text = json.dumps(chunk, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise TypeError(f"ctx.emit() takes a JSON value: {err}") from None
        size = len(text.encode("utf-8"))
        if size > _REQUEST_BYTES_MAX:
            raise ValueError(f"a chunk of {size} bytes of JSON is over the {_REQUEST_BYTES_MAX} a request may carry")
        with self._lock:
            self._buffer.append((json.loads(text), size))
            full = len(self._buffer) >= BATCH_CHUNKS
            arm = not full and not self._send_requested and not self._draining
            if arm:
                self._send_requested = True
        if full:
            self._call_on_loop(self._send_now)
        elif arm:
            self._call_on_loop(self._send_now)

    def _call_on_loop(self, fn: Callable[[], Any]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            fn()
        else:
            self._loop.call_soon_threadsafe(fn)

    # -- the loop -----------------------------------------------------------------------------------

    def _send_now(self) -> "asyncio.Future[None]":
        with self._lock:
            self._send_requested = False
        previous = self._sending
        self._sending = asyncio.ensure_future(self._drain(previous))
        return self._sending

    async def flush(self) -> None:
        """Every chunk emitted so far stored; raises LeaseLostError if the lease was lost."""
        await self._send_now()
        if self._failure is not None:
            raise self._failure

    async def _drain(self, previous: Optional["asyncio.Future[None]"]) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        with self._lock:
            self._draining = True
        while True:
            with self._lock:
                n, size = 0, 0
                while n < len(self._buffer) and n < REQUEST_CHUNKS and size + self._buffer[n][1] + 1 <= _REQUEST_BYTES_MAX:
                    size += self._buffer[n][1] + 1
                    n += 1
                batch = [chunk for chunk, _ in self._buffer[:n]]
                # Cleared with the emptiness seen under the same lock: an emit from another thread
                # either landed in this batch or sees no drain and sends on its own.
                if not batch or self._failure is not None:
                    self._draining = False
                    return
            if await self._send(batch):
                with self._lock:
                    del self._buffer[:n]

    async def _send(self, batch: List[Any]) -> bool:
        failures = 0
        while True:
            try:
                res = await self._http.request("POST", job_path(self._job_id) + "/output", body={"leaseId": self._lease_id, "chunks": batch})
                self._stored = int(res.body["chunks"])
                if res.body.get("cancelRequested"):
                    self._on_cancel_requested()
                return True
            except Exception as err:  # noqa: BLE001 - sorted below: lease lost, transient, or final
                if isinstance(err, SluiceApiError) and err.status in (404, 409):
                    self._fail(LeaseLostError(self._job_id, err.code))
                    self._on_lost(err.code)
                    return False
                if not is_retryable(err) or self._loop.time() >= self._lease_ends_at():
                    self._fail(err)
                    return False
                # Sent but unanswered (a dropped connection)? The attempt's count says whether it landed.
                if await self._landed(len(batch)):
                    return True
                await asyncio.sleep(_BACKOFF.delay(failures))
                failures += 1

    async def _landed(self, size: int) -> bool:
        try:
            res = await self._http.request("GET", job_path(self._job_id) + "/output-chunks", query={"from": self._stored})
        except Exception:  # noqa: BLE001 - can't tell: send again
            return False
        if res.body["attempt"] != self._attempt or res.body["next"] < self._stored + size:
            return False
        self._stored += size
        return True

    def _fail(self, err: BaseException) -> None:
        self._failure = err
        with self._lock:
            self._buffer.clear()
