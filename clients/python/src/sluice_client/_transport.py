"""HTTP/1.1 over asyncio streams, with keep-alive connections.

The standard library has a blocking HTTP client (http.client) and none for asyncio, and this SDK
takes no dependencies, so the little of HTTP/1.1 it needs is here: one request at a time per
connection, Content-Length or chunked bodies, idle connections reused until the server's
keep-alive timeout would close them.
"""
from __future__ import annotations

import asyncio
import ssl
import time
from typing import AsyncIterator, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

# Node's http server closes a keep-alive connection after 5 s idle; reuse ours for less than that.
_IDLE_REUSE_SECONDS = 4.0
_MAX_IDLE_CONNECTIONS = 64
_MAX_HEAD_BYTES = 256 * 1024


class ConnectionLost(ConnectionError):
    """The connection failed before the whole answer arrived."""


class RawResponse:
    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = time.monotonic()

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:  # noqa: BLE001 - closing a broken socket may raise; it is gone either way
            pass


class Transport:
    """Sends requests to one origin; bound to the event loop that first uses it."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"Sluice url must start with http:// or https:// and name a host, got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls = parts.scheme == "https"
        default_port = 443 if self.tls else 80
        host_text = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host_text if self.port == default_port else f"{host_text}:{self.port}"
        self.base_path = parts.path.rstrip("/")
        self._idle: List[_Connection] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def _idle_pool(self) -> List[_Connection]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # Connections belong to the loop that opened them; a new loop starts a new pool.
            self._loop = loop
            self._idle = []
        return self._idle

    async def _connect(self) -> _Connection:
        context = ssl.create_default_context() if self.tls else None
        reader, writer = await asyncio.open_connection(
            self.host, self.port, ssl=context, server_hostname=self.host if self.tls else None, limit=_MAX_HEAD_BYTES
        )
        return _Connection(reader, writer)

    async def _checkout(self) -> _Connection:
        pool = self._idle_pool()
        now = time.monotonic()
        while pool:
            conn = pool.pop()
            # One the server has closed (its FIN already read) or soon will is not reused.
            if now - conn.idle_since < _IDLE_REUSE_SECONDS and not conn.reader.at_eof():
                return conn
            conn.close()
        return await self._connect()

    def _checkin(self, conn: _Connection) -> None:
        pool = self._idle_pool()
        conn.idle_since = time.monotonic()
        if len(pool) >= _MAX_IDLE_CONNECTIONS:
            conn.close()
        else:
            pool.append(conn)

    def close_idle(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle = []

    async def request(self, method: str, target: str, headers: Dict[str, str], body: Optional[bytes]) -> RawResponse:
        """One exchange. A failure is never resent here, not even on a reused connection: the
        request may have been carried out, and whether to resend is the caller's call."""
        return await self._exchange(await self._checkout(), method, target, headers, body)

    async def stream_lines(self, method: str, target: str, headers: Dict[str, str], body: Optional[bytes]) -> "LineStream":
        """Sends the request and returns its answer's head; a 2xx body is then read line by line."""
        conn = await self._checkout()
        try:
            status, response_headers = await self._send_and_read_head(conn, method, target, headers, body)
        except BaseException:
            conn.close()
            raise
        return LineStream(self, conn, status, response_headers)

    async def _exchange(self, conn: _Connection, method: str, target: str, headers: Dict[str, str], body: Optional[bytes]) -> RawResponse:
        ok = False
        try:
            status, response_headers = await self._send_and_read_head(conn, method, target, headers, body)
            chunks = [chunk async for chunk in _body_chunks(conn.reader, response_headers, status, method)]
            ok = True
        finally:
            # Cancelled or failed midway, the connection is in an unknown state: it is never reused.
            if not ok:
                conn.close()
        if _keeps_alive(response_headers):
            self._checkin(conn)
        else:
            conn.close()
        return RawResponse(status, response_headers, b"".join(chunks))

    async def _send_and_read_head(
        self, conn: _Connection, method: str, target: str, headers: Dict[str, str], body: Optional[bytes]
    ) -> Tuple[int, Dict[str, str]]:
        lines = [f"{method} {self.base_path}{target} HTTP/1.1", f"Host: {self.host_header}"]
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            conn.writer.write(head + (body or b""))
            await conn.writer.drain()
        except (ConnectionError, OSError) as err:
            conn.close()
            raise ConnectionLost(f"sending failed: {err!r}") from err
        try:
            raw = await conn.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as err:
            conn.close()
            raise ConnectionLost("the server closed the connection without answering") from err
        except (ConnectionError, OSError) as err:
            conn.close()
            raise ConnectionLost(f"reading the answer failed: {err!r}") from err
        return _parse_head(raw)


class LineStream:
    """An answer whose body is read as it arrives, one line at a time (NDJSON)."""

    def __init__(self, transport: Transport, conn: _Connection, status: int, headers: Dict[str, str]) -> None:
        self._transport = transport
        self._conn = conn
        self.status = status
        self.headers = headers

    async def read_all(self) -> bytes:
        return b"".join([chunk async for chunk in self._chunks()])

    async def all_lines(self) -> AsyncIterator[bytes]:
        """Every line of the body as it arrives, blank ones included (they end Server-Sent Events)."""
        buffered = b""
        async for chunk in self._chunks():
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                yield line.rstrip(b"\r")
        if buffered:
            yield buffered

    async def lines(self) -> AsyncIterator[bytes]:
        buffered = b""
        async for chunk in self._chunks():
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                if line.strip():
                    yield line
        if buffered.strip():
            yield buffered

    def chunks(self) -> AsyncIterator[bytes]:
        """The body's pieces as they arrive (a download)."""
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        ok = False
        try:
            async for chunk in _body_chunks(self._conn.reader, self.headers, self.status, "POST"):
                yield chunk
            ok = True
        finally:
            if ok and _keeps_alive(self.headers):
                self._transport._checkin(self._conn)
            else:
                self._conn.close()

    def abandon(self) -> None:
        self._conn.close()


def _parse_head(raw: bytes) -> Tuple[int, Dict[str, str]]:
    text = raw.decode("latin-1")
    status_line, _, rest = text.partition("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ConnectionLost(f"not an HTTP/1.1 answer: {status_line[:100]!r}")
    headers: Dict[str, str] = {"_version": parts[0]}
    for line in rest.split("\r\n"):
        if not line:
            continue
        name, _, value = line.partition(":")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    return int(parts[1]), headers


def _keeps_alive(headers: Dict[str, str]) -> bool:
    connection = headers.get("connection", "").lower()
    if headers.get("_version") == "HTTP/1.0":
        return "keep-alive" in connection
    return "close" not in connection


async def _body_chunks(reader: asyncio.StreamReader, headers: Dict[str, str], status: int, method: str) -> AsyncIterator[bytes]:
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    # Trailers, if any, end with an empty line.
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass
                    return
                yield await reader.readexactly(size)
                await reader.readexactly(2)
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if length:
                yield await reader.readexactly(length)
        else:
            # No length: the body runs to the end of the connection (which is then not reused).
            headers["connection"] = "close"
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                yield chunk
    except (asyncio.IncompleteReadError, ConnectionError, OSError, ValueError) as err:
        raise ConnectionLost(f"the answer's body was cut off: {err!r}") from err
