"""Job event streams (Server-Sent Events) as async iterators that reconnect by themselves: each
event's id is durable, so after a dropped connection or a server restart the stream resumes with
Last-Event-ID and the server sends what came after it — every event once."""
from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Dict, List, Optional

from ._http import HttpClient, is_retryable
from .errors import SluiceNetworkError

_TERMINAL = {"job.succeeded", "job.failed", "job.canceled"}


async def event_stream(
    http: HttpClient,
    path: str,
    query: Dict[str, Any],
    since: Optional[str],
    until_terminal: bool,
    idle_timeout: float,
) -> AsyncIterator[Dict[str, Any]]:
    """Yields ``{"id", "type", "at", "job"}`` dicts (no ``id`` on a job.snapshot). A stream silent
    for ``idle_timeout`` seconds (the server sends a keep-alive every 15 s) is taken for dead."""
    last_id = since
    failures = 0
    while True:
        headers = {"Last-Event-ID": last_id} if last_id is not None else {}
        try:
            stream = await http.open_stream(path, query=query, headers=headers, timeout=idle_timeout)
            if stream.status == 204:  # a finished job's stream resumed past its end
                await stream.read_all()
                return
            lines = stream.all_lines().__aiter__()
            event_id: Optional[str] = None
            data: List[str] = []
            try:
                while True:
                    try:
                        raw = await asyncio.wait_for(lines.__anext__(), idle_timeout)
                    except StopAsyncIteration:
                        break
                    line = raw.decode("utf-8")
                    if line == "":
                        if data:
                            event = json.loads("\n".join(data))
                            if event_id:
                                event["id"] = event_id
                                last_id = event_id
                            failures = 0
                            yield event
                            if until_terminal and event.get("type") in _TERMINAL:
                                return
                        event_id, data = None, []
                    elif line.startswith(":"):
                        continue  # a keep-alive
                    else:
                        field, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field == "id":
                            event_id = value
                        elif field == "data":
                            data.append(value)
            finally:
                stream.abandon()
        except asyncio.TimeoutError:
            pass  # silent too long: reconnect where we were
        except SluiceNetworkError:
            pass
        except Exception as err:  # an answer the server meant (a bad since, an unknown job) ends the stream
            if not is_retryable(err):
                raise
        await asyncio.sleep(http.backoff.delay(failures))
        failures += 1


__all__ = ["event_stream"]
