"""The blocking client's private event loop: one daemon thread per process runs the asyncio core
(_core.py, the worker), and blocking calls wait for its answers. Heartbeats and lease polls keep
running there while handlers block in their own threads."""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from typing import Awaitable, Optional, TypeVar

T = TypeVar("T")


class LoopThread:
    _lock = threading.Lock()
    _shared: Optional["LoopThread"] = None

    @classmethod
    def shared(cls) -> "LoopThread":
        with cls._lock:
            # After a fork the child has the object but not the thread: it gets a loop of its own.
            if cls._shared is None or cls._shared.pid != os.getpid():
                cls._shared = cls()
            return cls._shared

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="sluice-client-loop", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, awaitable: Awaitable[T]) -> T:
        """Runs ``awaitable`` on the loop and blocks until it is done; interrupting the wait
        (Ctrl-C) cancels it there too."""
        if threading.current_thread() is self.thread:
            raise RuntimeError("a blocking Sluice call was made on the client's own event loop; use AsyncSluice there")
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def spawn(self, awaitable: Awaitable[T]) -> "concurrent.futures.Future[T]":
        """Starts ``awaitable`` on the loop without waiting for it."""
        return asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), self.loop)


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
