"""How a handler's return value or raised exception becomes what the worker reports for its job:
one table of rules (docs/sdk-wire-spec.md, "Outcomes"), so single and batch handlers agree."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from .errors import BatchItemError, JobCanceledError, NonRetryableError, RetryableError, WorkerClosingError

# Limits of the fail route's error fields, and of a job's output (1 MiB of JSON).
MAX_ERROR_MESSAGE_CHARS = 8192
MAX_ERROR_TYPE_CHARS = 256
MAX_OUTPUT_BYTES = 1_048_576

Outcome = Dict[str, Any]


class HandlerResult:
    """What a handler did: returned ``value``, or raised ``error``."""

    __slots__ = ("ok", "value", "error")

    def __init__(self, ok: bool, value: Any = None, error: Optional[BaseException] = None) -> None:
        self.ok = ok
        self.value = value
        self.error = error


def outcome_of(result: HandlerResult, abort_reason: Optional[BaseException]) -> Outcome:
    # A job whose cancel was requested while it ran ends canceled, whatever the handler returned:
    # the fail route turns a canceled job's failure into `canceled`.
    if isinstance(abort_reason, JobCanceledError):
        return _fail(abort_reason, False, None)
    if result.ok:
        return complete_with(result.value)
    assert result.error is not None
    return _fail_with(result.error, abort_reason)


def outcomes_of_batch(result: HandlerResult, abort_reasons: Sequence[Optional[BaseException]]) -> List[Outcome]:
    count = len(abort_reasons)
    if not result.ok:
        assert result.error is not None
        outcomes = [_fail_with(result.error, reason) for reason in abort_reasons]
    elif not isinstance(result.value, (list, tuple)) or len(result.value) != count:
        got = f"{len(result.value)} results" if isinstance(result.value, (list, tuple)) else type(result.value).__name__
        error = ValueError(f"batch handler returned {got} for {count} jobs; it must return one result per job, in order")
        outcomes = [_fail_with(error, reason) for reason in abort_reasons]
    else:
        # An exception in a job's place fails that job alone (BatchItemError says how).
        outcomes = [
            _fail_with(value, reason) if isinstance(value, BaseException) else complete_with(value)
            for value, reason in zip(result.value, abort_reasons)
        ]
    return [_fail(reason, False, None) if isinstance(reason, JobCanceledError) else o for o, reason in zip(outcomes, abort_reasons)]


def complete_with(value: Any) -> Outcome:
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        return _fail(NonRetryableError(f"handler output is not JSON-serializable: {err}"), False, None)
    # Over the limit the server refuses the report, and would re-offer the job only to get the
    # same output again: failed now, with the reason.
    size = len(text) if len(text) * 4 <= MAX_OUTPUT_BYTES else len(text.encode("utf-8"))
    if size > MAX_OUTPUT_BYTES:
        return _fail(NonRetryableError(f"handler output is {size} bytes of JSON; a job's output is at most {MAX_OUTPUT_BYTES} (1 MiB)"), False, None)
    return {"kind": "complete", "output": value}


def _fail_with(error: BaseException, abort_reason: Optional[BaseException]) -> Outcome:
    # Cut short by close(): not the job's fault, so it goes back for another worker now.
    if isinstance(abort_reason, WorkerClosingError):
        return _fail(error, True, 0)
    if isinstance(error, NonRetryableError):
        return _fail(error, False, None)
    if isinstance(error, (RetryableError, BatchItemError)):
        retryable = error.retryable if isinstance(error, BatchItemError) else True
        return _fail(error, retryable, error.retry_after_seconds)
    return _fail(error, True, None)


def _fail(error: BaseException, retryable: bool, retry_after_seconds: Optional[int]) -> Outcome:
    kind = type(error).__name__
    message = str(error) or kind
    failure: Dict[str, Any] = {
        "error": {"message": message[:MAX_ERROR_MESSAGE_CHARS], "type": kind[:MAX_ERROR_TYPE_CHARS]},
        "retryable": retryable,
    }
    if retry_after_seconds is not None:
        failure["retryAfterSeconds"] = retry_after_seconds
    return {"kind": "fail", "failure": failure}
