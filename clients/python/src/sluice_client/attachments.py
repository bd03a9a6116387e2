"""A job's attachments as the SDK hands them out (``job.attachments["image"]``,
``ctx.attachments["image"]``, ``job.output_attachments["result"]``): the blob's facts, and its bytes
a call away — whole, checked against the blob's SHA-256, or piece by piece as they arrive."""
from __future__ import annotations

import asyncio
import hashlib
import threading
from typing import Any, AsyncIterator, Awaitable, Dict, Iterator, Mapping, Optional, Protocol, Type, TypeVar

T = TypeVar("T")


class Downloader(Protocol):
    """What an attachment reads its bytes through (the client's BlobTransfer)."""

    async def download(self, raw: Mapping[str, Any]) -> AsyncIterator[bytes]: ...


class Attachment:
    """One attachment. ``bytes()`` and ``stream()`` block (a plain handler, the blocking client);
    ``await abytes()`` and ``async for piece in astream()`` are theirs for coroutines."""

    __slots__ = ("raw", "blob_id", "size", "content_type", "sha256", "download_url", "expires_at", "_transfer", "_loop")

    def __init__(self, raw: Mapping[str, Any], transfer: Optional[Downloader], loop: Optional[asyncio.AbstractEventLoop]) -> None:
        self.raw = dict(raw)
        self.blob_id: str = raw["blobId"]
        self.size: int = int(raw.get("size", 0))
        self.content_type: str = raw.get("contentType", "application/octet-stream")
        #: Lowercase hex SHA-256 of the bytes.
        self.sha256: str = raw.get("sha256", "")
        #: Presigned (no credentials) until ``expires_at``; the SDK asks for a fresh one when it is gone.
        self.download_url: Optional[str] = raw.get("downloadUrl")
        self.expires_at: Optional[str] = raw.get("expiresAt")
        self._transfer = transfer
        # The loop the SDK's connections live on: the blocking calls run their work there.
        self._loop = loop

    async def abytes(self) -> bytes:
        """The whole attachment; raises ValueError if its bytes are not the ones stored."""
        return b"".join([piece async for piece in self.astream()])

    async def astream(self) -> AsyncIterator[bytes]:
        """Its pieces as they arrive; raises ValueError at the end if size or SHA-256 differ."""
        if self._transfer is None:
            raise RuntimeError("this attachment is not bound to a client (get the job through Sluice or AsyncSluice)")
        digest = hashlib.sha256()
        length = 0
        async for piece in await self._transfer.download(self.raw):
            digest.update(piece)
            length += len(piece)
            yield piece
        if length != self.size:
            raise ValueError(f"attachment {self.blob_id}: got {length} bytes, expected {self.size}")
        if self.sha256 and digest.hexdigest() != self.sha256.lower():
            raise ValueError(f"attachment {self.blob_id}: SHA-256 {digest.hexdigest()} differs from the stored {self.sha256}")

    def bytes(self) -> bytes:
        """As abytes(), blocking."""
        return self._blocking(self.abytes())

    def stream(self) -> Iterator[bytes]:
        """``for piece in att.stream()``: as astream(), blocking."""
        pieces = self.astream()

        async def step() -> bytes:
            return await pieces.__anext__()

        async def close() -> None:
            await pieces.aclose()  # type: ignore[attr-defined]

        try:
            while True:
                try:
                    yield self._blocking(step())
                except StopAsyncIteration:
                    return
        finally:
            self._blocking(close())

    def save(self, path: Any) -> int:
        """Writes the attachment to the file ``path`` piece by piece; returns its size."""
        with open(path, "wb") as f:
            for piece in self.stream():
                f.write(piece)
        return self.size

    def _blocking(self, work: Awaitable[T]) -> T:
        loop = self._loop
        if loop is None:
            raise RuntimeError("this attachment is not bound to a client (get the job through Sluice or AsyncSluice)")
        if _on_loop(loop):
            raise RuntimeError("a blocking attachment call was made on the event loop; use await abytes() / async for in astream()")
        future = asyncio.run_coroutine_threadsafe(_coroutine(work), loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.blob_id} {self.content_type} {self.size} bytes>"


class AsyncAttachment(Attachment):
    """An attachment of an AsyncJob: ``await att.bytes()``, ``async for piece in att.stream()``."""

    __slots__ = ()

    async def bytes(self) -> bytes:  # type: ignore[override]
        return await self.abytes()

    def stream(self) -> AsyncIterator[bytes]:  # type: ignore[override]
        return self.astream()

    async def save(self, path: Any) -> int:  # type: ignore[override]
        """Writes the attachment to the file ``path`` piece by piece; returns its size."""
        with open(path, "wb") as f:
            async for piece in self.astream():
                f.write(piece)
        return self.size


def attachments_of(
    raw: Any, transfer: Optional[Downloader], loop: Optional[asyncio.AbstractEventLoop], kind: Type[Attachment] = Attachment
) -> Dict[str, Attachment]:
    """A job's attachment map (``{}`` without any, or from a server before attachments)."""
    if not isinstance(raw, Mapping):
        return {}
    return {name: kind(info, transfer, loop) for name, info in raw.items()}


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return getattr(loop, "_thread_id", None) == threading.get_ident()


async def _coroutine(work: Awaitable[T]) -> T:
    return await work
