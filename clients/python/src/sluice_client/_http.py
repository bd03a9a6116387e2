"""The one place the SDK talks to the server: JSON in and out, bearer auth (and the account acted
for), the server's coded
errors as SluiceApiError, and retries with backoff on transient failures (a restarting server, a
dropped keep-alive connection), honouring Retry-After."""
from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Callable, Dict, Mapping, Optional, Union
from urllib.parse import urlencode

from ._retry import TRANSIENT_STATUSES, Backoff, retry_after_seconds
from ._transport import ConnectionLost, RawResponse, Transport
from .errors import SluiceApiError, SluiceNetworkError

_NO_BODY = object()
QueryValue = Union[str, int, float, None]
# How long one attempt may take unless the call says otherwise (long polls add their wait).
DEFAULT_TIMEOUT_SECONDS = 30.0
_ACCOUNT_ID = re.compile(r"[0-9]{12}")


class Response:
    def __init__(self, status: int, headers: Dict[str, str], body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body


def to_json(value: Any, what: str = "the request body") -> bytes:
    """Compact JSON as JavaScript writes it; NaN, Infinity and non-JSON types are refused here."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} is not JSON-serializable: {err}") from err


def is_retryable(err: BaseException) -> bool:
    """Whether a failed request may be sent again: unreachable, or "try again shortly"."""
    return isinstance(err, SluiceNetworkError) or (isinstance(err, SluiceApiError) and err.status in TRANSIENT_STATUSES)


class HttpClient:
    def __init__(self, url: str, token: Optional[str], backoff: Backoff, account: Optional[str] = None) -> None:
        if account is not None and (not isinstance(account, str) or not _ACCOUNT_ID.fullmatch(account)):
            raise ValueError(f"account must be a 12-digit account id, got {account!r}")
        self.transport = Transport(url)
        self.token = token
        self.account = account
        self.backoff = backoff

    def retry_delay(self, attempt: int, err: BaseException) -> float:
        """Seconds before attempt ``attempt + 1`` after ``err``: its Retry-After, else the backoff."""
        asked = err.retry_after if isinstance(err, SluiceApiError) else None
        return asked if asked is not None else self.backoff.delay(attempt - 1)

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = _NO_BODY,
        query: Optional[Mapping[str, QueryValue]] = None,
        headers: Optional[Mapping[str, str]] = None,
        max_attempts: float = 1,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> Response:
        """Sends the request; transient failures are retried until ``max_attempts`` attempts in all."""
        payload = None if body is _NO_BODY else to_json(body)
        attempt = 1
        while True:
            try:
                return await self._once(method, path, payload, query, headers, timeout)
            except (SluiceNetworkError, SluiceApiError) as err:
                if not is_retryable(err) or attempt >= max_attempts:
                    raise
                await asyncio.sleep(self.retry_delay(attempt, err))
                attempt += 1

    async def request_lines(
        self,
        method: str,
        path: str,
        *,
        body: Any,
        query: Optional[Mapping[str, QueryValue]],
        timeout: float,
        on_line: Callable[[Any], None],
    ) -> None:
        """One attempt at a request answered with NDJSON: each line is parsed and handed to
        ``on_line`` as it arrives. Not retried here: lines handed over can't be taken back."""
        payload = to_json(body)
        target = path + _query_string(query)
        headers = self._headers("application/x-ndjson", payload, None)

        async def exchange() -> None:
            stream = await self.transport.stream_lines(method, target, headers, payload)
            if not 200 <= stream.status < 300:
                raw = RawResponse(stream.status, stream.headers, await stream.read_all())
                raise _api_error(raw)
            async for line in stream.lines():
                on_line(json.loads(line))

        await self._guard(method, path, timeout, exchange())

    async def open_stream(self, path: str, *, query: Optional[Mapping[str, QueryValue]], headers: Mapping[str, str], timeout: float) -> Any:
        """A GET whose answer is read as it arrives (Server-Sent Events): its head within ``timeout``,
        then the LineStream; an error answer raises as any request's would."""

        async def head() -> Any:
            stream = await self.transport.stream_lines("GET", path + _query_string(query), self._headers("text/event-stream", None, headers), None)
            if not 200 <= stream.status < 300:
                raise _api_error(RawResponse(stream.status, stream.headers, await stream.read_all()))
            return stream

        return await self._guard("GET", path, timeout, head())

    async def _once(
        self,
        method: str,
        path: str,
        payload: Optional[bytes],
        query: Optional[Mapping[str, QueryValue]],
        headers: Optional[Mapping[str, str]],
        timeout: float,
    ) -> Response:
        target = path + _query_string(query)
        raw: RawResponse = await self._guard(
            method, path, timeout, self.transport.request(method, target, self._headers("application/json", payload, headers), payload)
        )
        if 200 <= raw.status < 300:
            text = raw.body.decode("utf-8")
            return Response(raw.status, raw.headers, json.loads(text) if text else None)
        raise _api_error(raw)

    async def _guard(self, method: str, path: str, timeout: float, work: Any) -> Any:
        """Runs one attempt under its timeout, turning connection failures into SluiceNetworkError."""
        try:
            return await asyncio.wait_for(work, timeout)
        except asyncio.TimeoutError as err:
            raise SluiceNetworkError(f"{method} {path} timed out after {timeout:g} s") from err
        except (ConnectionLost, OSError, asyncio.IncompleteReadError) as err:
            raise SluiceNetworkError(f"{method} {path} failed: {err}") from err

    def _headers(self, accept: str, payload: Optional[bytes], extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
        headers = {"Accept": accept, "User-Agent": "sluice-client-python"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.account is not None:
            headers["Sluice-Account"] = self.account
        if extra:
            headers.update(extra)
        return headers


def _api_error(raw: RawResponse) -> SluiceApiError:
    retry_after = retry_after_seconds(raw.headers) if raw.status in TRANSIENT_STATUSES else None
    text = raw.body.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            return SluiceApiError(error["code"], raw.status, str(error.get("message") or error["code"]), retry_after)
    except ValueError:
        pass  # Not JSON (a proxy's HTML page, say): a generic code.
    return SluiceApiError(f"Http{raw.status}", raw.status, text[:500] or f"HTTP {raw.status}", retry_after)


def _query_string(query: Optional[Mapping[str, QueryValue]]) -> str:
    if not query:
        return ""
    pairs = [(k, str(v)) for k, v in query.items() if v is not None]
    return "?" + urlencode(pairs) if pairs else ""
