"""Background tasks kept alive until they finish: the event loop holds only weak references to
tasks, so one nobody awaits could otherwise be garbage-collected mid-flight."""
from __future__ import annotations

import asyncio
from typing import Any, Coroutine, Set, TypeVar

T = TypeVar("T")
_running: Set["asyncio.Task[Any]"] = set()


def spawn(coro: Coroutine[Any, Any, T]) -> "asyncio.Task[T]":
    task = asyncio.ensure_future(coro)
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task
