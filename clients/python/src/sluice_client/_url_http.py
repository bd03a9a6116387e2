"""Requests to absolute URLs — a blob's presigned upload and download URLs, on Sluice or another
host (S3): no Sluice credentials, the upload's body streamed from its source in pieces and the
download's read as it arrives, so neither is ever held whole in memory. Not retried here."""
from __future__ import annotations

import asyncio
from typing import AsyncIterator, Dict, Optional, Tuple
from urllib.parse import urlsplit

from ._http import _api_error
from ._transport import ConnectionLost, LineStream, RawResponse, Transport, _parse_head
from .errors import SluiceNetworkError

# The answer's head must come within this long; the body may take as long as it takes.
HEAD_TIMEOUT_SECONDS = 30.0
# After the last byte of an upload, how long the server may take to store it and answer.
UPLOAD_ANSWER_TIMEOUT_SECONDS = 600.0


class UrlClient:
    """One keep-alive Transport per origin the URLs name."""

    def __init__(self) -> None:
        self._transports: Dict[str, Transport] = {}

    def _split(self, url: str) -> Tuple[Transport, str]:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        transport = self._transports.get(origin)
        if transport is None:
            transport = self._transports[origin] = Transport(origin)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return transport, target

    async def put(self, url: str, content_type: str, body: AsyncIterator[bytes], length: Optional[int]) -> None:
        """PUTs the pieces of ``body`` as they come: with Content-Length when ``length`` is known,
        else chunked. Raises SluiceApiError for an error answer, SluiceNetworkError when cut off."""
        transport, target = self._split(url)
        where = f"PUT {url.split('?')[0]}"
        conn = await transport._checkout()
        ok = False
        try:
            head = [f"PUT {transport.base_path}{target} HTTP/1.1", f"Host: {transport.host_header}", f"Content-Type: {content_type}", "User-Agent: sluice-client-python"]
            head.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
            conn.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            async for piece in body:
                if not piece:
                    continue
                conn.writer.write(piece if length is not None else b"%x\r\n%s\r\n" % (len(piece), piece))
                await conn.writer.drain()
            if length is None:
                conn.writer.write(b"0\r\n\r\n")
            await conn.writer.drain()
            raw = await asyncio.wait_for(conn.reader.readuntil(b"\r\n\r\n"), UPLOAD_ANSWER_TIMEOUT_SECONDS)
            status, headers = _parse_head(raw)
            answer = LineStream(transport, conn, status, headers)
            ok = True
            text = await asyncio.wait_for(answer.read_all(), HEAD_TIMEOUT_SECONDS)
        except (ConnectionLost, ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as err:
            raise SluiceNetworkError(f"{where} failed: {err!r}") from err
        finally:
            if not ok:
                conn.close()
        if not 200 <= status < 300:
            raise _api_error(RawResponse(status, headers, text))

    async def get(self, url: str) -> AsyncIterator[bytes]:
        """GETs ``url``; once its head says 2xx, the body's pieces as they arrive."""
        transport, target = self._split(url)
        where = f"GET {url.split('?')[0]}"
        try:
            stream = await asyncio.wait_for(transport.stream_lines("GET", target, {"Accept": "*/*", "User-Agent": "sluice-client-python"}, None), HEAD_TIMEOUT_SECONDS)
        except (ConnectionLost, ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as err:
            raise SluiceNetworkError(f"{where} failed: {err!r}") from err
        if not 200 <= stream.status < 300:
            raise _api_error(RawResponse(stream.status, stream.headers, await stream.read_all()))
        return _pieces(stream, where)

    def close_idle(self) -> None:
        for transport in self._transports.values():
            transport.close_idle()


async def _pieces(stream: LineStream, where: str) -> AsyncIterator[bytes]:
    try:
        async for piece in stream.chunks():
            yield piece
    except ConnectionLost as err:
        raise SluiceNetworkError(f"{where}: {err}") from err
