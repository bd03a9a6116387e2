"""Job ids and queue names as URL path segments.

A segment that is ``.`` or ``..`` is a dot segment, which URL handling (proxies, the server's
router) may remove or climb, percent-encoded as ``%2E`` too; it is encoded twice (``%252E``), which
the jobs API reads back as the dot segment (docs/jobs-api.md), so it is answered like any id or name.
"""
from __future__ import annotations

from urllib.parse import quote


def path_segment(value: str) -> str:
    if value in (".", ".."):
        return "%252E" * len(value)
    return quote(value, safe="")


def job_path(job_id: str) -> str:
    return f"/v1/jobs/{path_segment(job_id)}"


def queue_path(queue: str) -> str:
    return f"/v1/queues/{path_segment(queue)}"


def schedule_path(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"schedule name must be a str, got {type(name).__name__}")
    return f"/v1/schedules/{path_segment(name)}"
