"""What may be attached to a job (``submit(..., attachments=)``, ``ctx.attach(name, data)``), and
how each becomes an upload: bytes as they are, a path or a file object read in pieces — never
whole into memory — or an uploaded blob (an Attachment) reused without uploading anything."""
from __future__ import annotations

import asyncio
import mimetypes
import os
import re
from pathlib import PurePath
from typing import Any, AsyncIterator, Callable, Iterable, List, Optional, Union

#: A piece of a file read at a time.
PIECE_BYTES = 256 * 1024
#: Attachments per job at most (docs/jobs-api.md).
MAX_ATTACHMENTS = 16
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_OCTET_STREAM = "application/octet-stream"
# Kinds inference jobs meet that mimetypes may not know on every system.
_EXTRA_TYPES = {".pgm": "image/x-portable-graymap", ".ppm": "image/x-portable-pixmap", ".wav": "audio/wav", ".webp": "image/webp", ".flac": "audio/flac", ".jsonl": "application/x-ndjson"}


class BlobRef:
    """An uploaded blob, attached as it is."""

    __slots__ = ("blob_id",)

    def __init__(self, blob_id: str) -> None:
        self.blob_id = blob_id


class UploadPlan:
    """A source ready to upload: ``open()`` gives its pieces (again, when ``replayable``)."""

    __slots__ = ("content_type", "length", "replayable", "open")

    def __init__(self, content_type: str, length: Optional[int], replayable: bool, open: Callable[[], AsyncIterator[bytes]]) -> None:
        self.content_type = content_type
        self.length = length
        self.replayable = replayable
        self.open = open


def content_type_of_path(path: Union[str, PurePath]) -> str:
    suffix = PurePath(path).suffix.lower()
    return _EXTRA_TYPES.get(suffix) or mimetypes.guess_type(str(path))[0] or _OCTET_STREAM


def check_names(names: Iterable[str], what: str) -> None:
    """Raises for a name the server would refuse, or too many, before anything is uploaded."""
    names = list(names)
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"{what}: attachment name {name!r} must be 1–64 characters of A–Z a–z 0–9 . _ -")
    if len(names) > MAX_ATTACHMENTS:
        raise ValueError(f"{what}: {len(names)} attachments; a job takes at most {MAX_ATTACHMENTS}")


def resolve(source: Any, name: str, content_type: Optional[str] = None) -> Union[BlobRef, UploadPlan]:
    blob_id = getattr(source, "blob_id", None)
    if isinstance(blob_id, str):
        return BlobRef(blob_id)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return UploadPlan(content_type or _OCTET_STREAM, len(data), True, lambda: _of_bytes(data))
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"attachment {name}: no such file: {path}")
        return UploadPlan(content_type or content_type_of_path(path), os.path.getsize(path), True, lambda: _of_path(path))
    if hasattr(source, "read"):
        return _of_file_object(source, name, content_type)
    raise TypeError(f"attachment {name}: expected bytes, a path (str or pathlib.Path), a binary file object or an Attachment; got {type(source).__name__}")


def _of_file_object(f: Any, name: str, content_type: Optional[str]) -> UploadPlan:
    start: Optional[int] = None
    length: Optional[int] = None
    try:
        if f.seekable():
            start = f.tell()
            length = f.seek(0, os.SEEK_END) - start
            f.seek(start)
    except (AttributeError, OSError, ValueError):
        start, length = None, None
    file_name = getattr(f, "name", None)
    guessed = content_type_of_path(file_name) if isinstance(file_name, str) else _OCTET_STREAM

    def open_() -> AsyncIterator[bytes]:
        if start is not None:
            f.seek(start)
        return _of_reader(f.read, name)

    # A file object that can seek back can be sent again; a pipe can't.
    return UploadPlan(content_type or guessed, length, start is not None, open_)


async def _of_bytes(data: bytes) -> AsyncIterator[bytes]:
    view = memoryview(data)
    for at in range(0, len(data), PIECE_BYTES):
        yield bytes(view[at : at + PIECE_BYTES])


async def _of_path(path: str) -> AsyncIterator[bytes]:
    # Opened as each upload starts (a retry reads it again), and read off the event loop.
    loop = asyncio.get_running_loop()
    f = await loop.run_in_executor(None, open, path, "rb")
    try:
        async for piece in _of_reader(f.read, path):
            yield piece
    finally:
        f.close()


async def _of_reader(read: Callable[[int], Any], what: str) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    while True:
        piece = await loop.run_in_executor(None, read, PIECE_BYTES)
        if not piece:
            return
        if isinstance(piece, str):
            raise TypeError(f"attachment {what}: the file object is open in text mode; open it with 'rb'")
        yield bytes(piece)


__all__: List[str] = ["BlobRef", "UploadPlan", "check_names", "content_type_of_path", "resolve"]
