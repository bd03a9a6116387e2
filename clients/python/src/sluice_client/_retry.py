"""When a request may be sent again, and how long to wait first: exponential backoff with full
jitter (many workers retrying against a restarting server spread out instead of arriving
together), or what the server's Retry-After asked for."""
from __future__ import annotations

import random
from typing import Callable, Dict, Optional

# Statuses that mean "try again shortly", not "your request is wrong".
TRANSIENT_STATUSES = frozenset((408, 429, 502, 503, 504))
# A Retry-After longer than this is waited for only this long.
MAX_RETRY_AFTER_SECONDS = 60.0


class Backoff:
    def __init__(self, base_seconds: float = 0.1, cap_seconds: float = 5.0, rand: Callable[[], float] = random.random) -> None:
        self.base_seconds = base_seconds
        self.cap_seconds = cap_seconds
        self.rand = rand

    def delay(self, retry: int) -> float:
        """Seconds before retry number ``retry`` (0 = the first retry)."""
        ceiling = min(self.cap_seconds, self.base_seconds * 2 ** min(retry, 30))
        return self.rand() * ceiling


def retry_after_seconds(headers: Dict[str, str]) -> Optional[float]:
    """The answer's Retry-After in delta-seconds (capped), or None when absent or not a number."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    if seconds != seconds or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER_SECONDS)
