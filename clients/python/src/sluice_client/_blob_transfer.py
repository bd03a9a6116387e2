"""Moving a blob's bytes: ``POST /v1/blobs`` for an upload URL, the bytes PUT there (presigned:
no Sluice credentials, streamed), ``GET /v1/blobs/{id}`` for the uploaded blob's facts and a fresh
download URL, and a download read as it arrives."""
from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, Mapping, Optional

from ._attachment_source import BlobRef, UploadPlan, check_names, resolve
from ._http import HttpClient, is_retryable
from ._paths import path_segment
from ._url_http import UrlClient
from .errors import SluiceApiError

# A download URL answered with one of these has expired or been revoked: a fresh one is asked for once.
_STALE_URL_STATUSES = frozenset((400, 401, 403, 404, 410))


class BlobTransfer:
    def __init__(self, http: HttpClient, attempts: int) -> None:
        self.http = http
        self.attempts = attempts
        self.urls = UrlClient()

    async def upload(self, plan: UploadPlan) -> Dict[str, Any]:
        """Uploads one source; answers the stored blob's facts (GET /v1/blobs/{id})."""
        # Safe to repeat: a blob never referenced is dropped after a day.
        created = (await self.http.request("POST", "/v1/blobs", body={"contentType": plan.content_type}, max_attempts=self.attempts)).body
        attempt = 1
        while True:
            try:
                await self.urls.put(created["uploadUrl"], plan.content_type, plan.open(), plan.length)
                break
            except Exception as err:  # noqa: BLE001 - sorted: retried when the body can be sent again
                if not plan.replayable or not is_retryable(err) or attempt >= self.attempts:
                    raise
                await asyncio.sleep(self.http.retry_delay(attempt, err))
                attempt += 1
        return await self.info(created["blobId"])

    async def upload_source(self, source: Any, name: str, content_type: Optional[str] = None) -> Dict[str, Any]:
        """One source uploaded (an Attachment looked up, not uploaded again): the blob's facts."""
        plan = resolve(source, name, content_type)
        return await (self.info(plan.blob_id) if isinstance(plan, BlobRef) else self.upload(plan))

    async def upload_all(self, sources: Mapping[str, Any], what: str) -> Dict[str, str]:
        """Every source uploaded in parallel (an Attachment is reused, not uploaded): blob ids by name."""
        if not isinstance(sources, Mapping):
            raise TypeError(f"{what}: attachments must be a dict of name → data, got {type(sources).__name__}")
        check_names(sources.keys(), what)
        plans = {name: resolve(source, name) for name, source in sources.items()}

        async def one(plan: Any) -> str:
            return plan.blob_id if isinstance(plan, BlobRef) else (await self.upload(plan))["blobId"]

        ids = await asyncio.gather(*(one(plan) for plan in plans.values()))
        return dict(zip(plans.keys(), ids))

    async def info(self, blob_id: str) -> Dict[str, Any]:
        """The blob's facts and a download URL valid until its ``expiresAt``."""
        if not isinstance(blob_id, str) or not blob_id:
            raise TypeError(f"blob id must be a non-empty str, got {blob_id!r}")
        return (await self.http.request("GET", f"/v1/blobs/{path_segment(blob_id)}", max_attempts=self.attempts)).body

    async def download(self, raw: Mapping[str, Any]) -> AsyncIterator[bytes]:
        """The blob's pieces as they arrive, from the attachment's own download URL when it has one
        that still works, else from a fresh one."""
        url: Optional[str] = raw.get("downloadUrl")
        if url:
            try:
                return await self.urls.get(url)
            except Exception as err:  # noqa: BLE001 - a stale URL or a dropped connection: a fresh URL once
                if not (isinstance(err, SluiceApiError) and err.status in _STALE_URL_STATUSES) and not is_retryable(err):
                    raise
        fresh = await self.info(raw["blobId"])
        return await self.urls.get(fresh["downloadUrl"])
