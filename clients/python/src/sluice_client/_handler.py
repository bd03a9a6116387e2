"""Calling a user's handler: blocking functions in the worker's threads, coroutine functions on
the event loop; ``(job)`` or ``(job, ctx)``, whichever the function takes. A raise is a value."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Optional

from ._outcomes import HandlerResult
from ._pool import DaemonThreadPool
from ._tracing import job_span


def _takes_context(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2


def _is_coroutine_function(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


class Handler:
    def __init__(self, fn: Callable[..., Any], concurrency: int, name: str) -> None:
        if not callable(fn):
            raise TypeError(f"handler must be callable, got {type(fn).__name__}")
        self._fn = fn
        self._with_context = _takes_context(fn)
        self.is_async = _is_coroutine_function(fn)
        self._pool: Optional[DaemonThreadPool] = None if self.is_async else DaemonThreadPool(concurrency, name)

    async def call(self, arg: Any, ctx: Any) -> HandlerResult:
        if self._pool is None:
            try:
                with job_span(arg):
                    return HandlerResult(True, await self._invoke(arg, ctx))
            except Exception as err:  # noqa: BLE001 - the handler's failure is the job's outcome
                return HandlerResult(False, error=err)
        result: HandlerResult = await asyncio.get_running_loop().run_in_executor(self._pool, self._call_blocking, arg, ctx)
        if result.ok and inspect.isawaitable(result.value):
            # A plain function that returned a coroutine: awaited here, on the loop.
            try:
                return HandlerResult(True, await result.value)
            except Exception as err:  # noqa: BLE001
                return HandlerResult(False, error=err)
        return result

    def _invoke(self, arg: Any, ctx: Any) -> Any:
        return self._fn(arg, ctx) if self._with_context else self._fn(arg)

    def _call_blocking(self, arg: Any, ctx: Any) -> HandlerResult:
        try:
            with job_span(arg):
                return HandlerResult(True, self._invoke(arg, ctx))
        except Exception as err:  # noqa: BLE001
            return HandlerResult(False, error=err)

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
