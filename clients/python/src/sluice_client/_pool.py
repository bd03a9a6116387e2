"""Threads for blocking handlers: daemon threads, started as work needs them up to ``concurrency``.
Not concurrent.futures.ThreadPoolExecutor: its threads are joined at interpreter exit, so one
handler that ignores ctx.cancelled after close(timeout=) gave up on it would keep the process
alive; a worker that has drained must be able to exit."""
from __future__ import annotations

import concurrent.futures
import functools
import queue
import threading
from typing import Any, Callable, List, Optional, Tuple


class DaemonThreadPool(concurrent.futures.Executor):
    def __init__(self, max_workers: int, name: str) -> None:
        self._max_workers = max_workers
        self._name = name
        self._work: "queue.SimpleQueue[Optional[Tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple]]]" = queue.SimpleQueue()
        self._threads: List[threading.Thread] = []
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> "concurrent.futures.Future[Any]":  # type: ignore[override]
        if self._shut:
            raise RuntimeError("the worker's handler threads are shut down")
        future: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
        self._work.put((future, functools.partial(fn, *args, **kwargs) if kwargs else fn, args if not kwargs else ()))
        # An idle thread takes it; otherwise start one more, up to the limit.
        if not self._idle.acquire(timeout=0):
            with self._lock:
                if len(self._threads) < self._max_workers:
                    thread = threading.Thread(target=self._run, name=f"{self._name}-{len(self._threads) + 1}", daemon=True)
                    self._threads.append(thread)
                    thread.start()
        return future

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            future, fn, args = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as err:  # noqa: BLE001 - handed to whoever awaits the future
                    future.set_exception(err)
            del item, future, fn, args
            self._idle.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shut = True
            threads = list(self._threads)
        for _ in threads:
            self._work.put(None)
        if wait:
            for thread in threads:
                thread.join()
