"""ctx.attach(): the files a handler attaches to its job's result. Each upload starts at once on
the worker's loop (alongside the handler's work); the worker waits for every upload before it
reports, and sends their blob ids with the complete as ``outputAttachments``."""
from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional, Tuple

from ._attachment_source import check_names
from ._blob_transfer import BlobTransfer
from .attachments import Attachment


class OutputAttachments:
    """Touched only on the worker's loop."""

    def __init__(self, transfer: BlobTransfer, loop: asyncio.AbstractEventLoop) -> None:
        self._transfer = transfer
        self._loop = loop
        self._uploads: Dict[str, "asyncio.Task[Dict[str, Any]]"] = {}

    def start(self, name: str, source: Any, content_type: Optional[str]) -> "asyncio.Task[Dict[str, Any]]":
        """Starts the upload (attaching a name again replaces it); the task answers the blob's facts."""
        check_names([*self._uploads.keys(), *([] if name in self._uploads else [name])], "ctx.attach()")
        task = self._loop.create_task(self._transfer.upload_source(source, name, content_type))
        # Settled by settle(): unobserved here, a failed upload must not be logged as never retrieved.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._uploads[name] = task
        return task

    async def attach(self, name: str, source: Any, content_type: Optional[str]) -> Attachment:
        return Attachment(await self.start(name, source, content_type), self._transfer, self._loop)

    async def settle(self) -> Tuple[Optional[Dict[str, str]], Optional[BaseException]]:
        """Waits for every upload: (blob ids by name, None), or (None, the first upload's failure)."""
        names = list(self._uploads.keys())
        results = await asyncio.gather(*self._uploads.values(), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                return None, result
        return {name: info["blobId"] for name, info in zip(names, results)}, None  # type: ignore[index]
