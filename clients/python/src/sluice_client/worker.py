"""Workers: ``queue.work(handler, ...)`` starts one at once and returns it.

The blocking client's Worker runs on the client's event-loop thread and calls blocking handlers
in threads of its own; ``serve()`` blocks until SIGTERM / SIGINT, then drains. The asyncio
client's AsyncWorker runs on the caller's loop.
"""
from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, Optional

from ._core import check_timeout
from ._worker_core import WorkerCore, WorkerStats

if TYPE_CHECKING:
    from ._loop_thread import LoopThread


class _WorkerView:
    def __init__(self, core: WorkerCore) -> None:
        self._core = core

    @property
    def queue(self) -> str:
        return self._core.queue

    @property
    def stats(self) -> WorkerStats:
        """Counted once the server confirmed them: leased, completed, failed, released; active now."""
        return self._core.stats


class Worker(_WorkerView):
    """A running worker (blocking API)."""

    def __init__(self, loop_thread: "LoopThread", core: WorkerCore) -> None:
        super().__init__(core)
        self._loop_thread = loop_thread
        self._stopped = threading.Event()
        self._error: Optional[BaseException] = None
        loop_thread.loop.call_soon_threadsafe(core.done.add_done_callback, self._on_done)

    def _on_done(self, done: Any) -> None:
        self._error = done.exception()
        self._stopped.set()

    def close(self, timeout: Optional[float] = None) -> None:
        """Stops leasing, waits for running handlers and their reports, hands back jobs leased but
        not started. With ``timeout`` seconds, handlers still running then are cut off (ctx.cancelled
        set, their jobs handed back — the attempt counts) and no longer waited for."""
        check_timeout(timeout)
        self._loop_thread.call(self._core.close(timeout))

    def begin_close(self, timeout: Optional[float] = None) -> None:
        """close() without waiting for it (``join()`` waits)."""
        check_timeout(timeout)
        self._loop_thread.spawn(self._core.close(timeout))

    def join(self, timeout: Optional[float] = None) -> bool:
        """Waits until the worker has stopped; True if it has. Raises the server's error when the
        worker stopped on its own because the server refuses its lease requests for good."""
        if not self._stopped.wait(timeout):
            return False
        if self._error is not None:
            raise self._error
        return True

    def serve(self, drain_timeout: Optional[float] = None) -> None:
        """Blocks until the worker stops. On SIGTERM or SIGINT (from the main thread) it drains as
        close(drain_timeout) and returns; a second signal exits at once with status 1."""
        check_timeout(drain_timeout, "drain_timeout")
        restore = {}
        if threading.current_thread() is threading.main_thread():
            draining = threading.Event()

            def on_signal(signum: int, _frame: Any) -> None:
                name = signal.Signals(signum).name
                if draining.is_set():
                    print(f"sluice worker: {name} again, exiting without draining", file=sys.stderr, flush=True)
                    raise SystemExit(1)
                draining.set()
                print(f"sluice worker: {name}: draining {self.stats.active} running job(s)", file=sys.stderr, flush=True)
                self.begin_close(drain_timeout)

            for signum in (signal.SIGTERM, signal.SIGINT):
                restore[signum] = signal.signal(signum, on_signal)
        try:
            while not self.join(1.0):
                pass
        finally:
            for signum, previous in restore.items():
                signal.signal(signum, previous)

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncWorker(_WorkerView):
    """A running worker on the caller's event loop (asyncio API)."""

    async def close(self, timeout: Optional[float] = None) -> None:
        """As Worker.close()."""
        await self._core.close(timeout)

    async def wait(self) -> None:
        """Returns once the worker has stopped; raises the fatal lease error if one stopped it."""
        await asyncio.shield(self._core.done)

    async def __aenter__(self) -> "AsyncWorker":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
