"""Attachments through the Python SDK against a real server (and its blob store): a submit uploads
bytes, a path and a file object; the worker reads them (whole and piece by piece) and attaches
derived files; the caller reads those back — every byte checked by SHA-256. The same from a
coroutine handler and AsyncSluice, a blob uploaded ahead, names refused before anything is sent,
and a failed upload failing the attempt."""
from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Dict

import pytest

from sluice_client import AsyncSluice, Attachment, Sluice, SluiceApiError


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.spec("attachments")
def test_bytes_path_and_file_object_round_trip(sluice: Sluice, queue_name: str, tmp_dir: Path) -> None:
    image = os.urandom(300_000)
    audio = os.urandom(2 * 1024 * 1024 + 17)
    notes = os.urandom(700_001)
    (tmp_dir / "clip.wav").write_bytes(audio)
    (tmp_dir / "notes.bin").write_bytes(notes)
    seen: Dict[str, Any] = {}

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        for name, att in ctx.attachments.items():
            seen[name] = (att.size, att.content_type, att.sha256, sha(att.bytes()), sha(b"".join(att.stream())))
        ctx.attach("reversed", ctx.attachments["image"].bytes()[::-1], content_type="image/x-reversed")
        out = tmp_dir / "out.wav"
        out.write_bytes(ctx.attachments["clip"].bytes()[::-1])
        ctx.attach("clip", out)
        return {"images": 1}

    q = sluice.queue(queue_name)
    with open(tmp_dir / "notes.bin", "rb") as notes_file:
        job = q.submit({"what": "reverse"}, attachments={"image": image, "clip": tmp_dir / "clip.wav", "notes": notes_file})
    assert sorted(job.attachments) == ["clip", "image", "notes"]
    assert (job.attachments["clip"].size, job.attachments["clip"].content_type) == (len(audio), "audio/wav")
    with q.work(handler):
        done = job.wait(timeout=30)
    assert (done.status, done.output) == ("succeeded", {"images": 1})
    assert seen == {
        "image": (len(image), "application/octet-stream", sha(image), sha(image), sha(image)),
        "clip": (len(audio), "audio/wav", sha(audio), sha(audio), sha(audio)),
        "notes": (len(notes), "application/octet-stream", sha(notes), sha(notes), sha(notes)),
    }
    out = done.output_attachments
    assert sorted(out) == ["clip", "reversed"]
    assert (out["reversed"].size, out["reversed"].content_type, out["reversed"].sha256) == (len(image), "image/x-reversed", sha(image[::-1]))
    assert sha(out["reversed"].bytes()) == sha(image[::-1])
    assert sha(b"".join(out["clip"].stream())) == sha(audio[::-1])
    assert out["clip"].save(tmp_dir / "saved.wav") == len(audio)
    assert (tmp_dir / "saved.wav").read_bytes() == audio[::-1]
    # Read again through GET /v1/jobs/{id} (fresh download URLs).
    assert sha(sluice.jobs.get(job.id).output_attachments["clip"].bytes()) == sha(audio[::-1])


def test_coroutine_handler_and_async_client(server: Any, queue_name: str) -> None:
    data = os.urandom(123_457)

    async def handler(job, ctx):  # type: ignore[no-untyped-def]
        got = await ctx.attachments["in"].abytes()
        pieces = [p async for p in ctx.attachments["in"].astream()]
        assert b"".join(pieces) == got
        await ctx.aattach("upper", got[::-1])
        return len(got)

    async def main() -> None:
        async with AsyncSluice(server.url) as client:
            q = client.queue(queue_name)
            async with q.work(handler):
                job = await q.submit(None, attachments={"in": data})
                done = await job.wait(timeout=30)
            assert (done.status, done.output) == ("succeeded", len(data))
            assert sha(await done.output_attachments["upper"].bytes()) == sha(data[::-1])
            assert b"".join([p async for p in done.output_attachments["upper"].stream()]) == data[::-1]
            blob = await client.blobs.upload(data, content_type="application/x-thing")
            assert (blob.size, blob.sha256, blob.content_type) == (len(data), sha(data), "application/x-thing")

    asyncio.run(main())


def test_a_blob_uploaded_ahead_is_attached_once_and_an_input_passed_on_by_streaming_it(sluice: Sluice, queue_name: str) -> None:
    data = os.urandom(50_000)
    blob = sluice.blobs.upload(data, content_type="application/x-weights")
    assert isinstance(blob, Attachment) and (blob.size, blob.sha256, blob.content_type) == (len(data), sha(data), "application/x-weights")
    q = sluice.queue(queue_name)

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        model = ctx.attachments["model"]
        with tempfile.TemporaryFile() as f:
            for piece in model.stream():
                f.write(piece)
            f.seek(0)
            return ctx.attach("same", f, content_type=model.content_type).sha256

    with q.work(handler):
        done = q.run(1, attachments={"model": blob}, timeout=30)
    assert (done.status, done.output) == ("succeeded", sha(data))
    assert done.attachments["model"].blob_id == blob.blob_id
    assert done.output_attachments["same"].blob_id != blob.blob_id
    assert (done.output_attachments["same"].sha256, done.output_attachments["same"].content_type) == (sha(data), "application/x-weights")
    # A blob belongs to one job: the server refuses it for a second, and creates nothing.
    with pytest.raises(SluiceApiError, match=r"is attached to job .* already"):
        q.submit(2, attachments={"model": blob})
    assert [j.input for j in q.list()] == [1]


def test_bad_names_and_sources_are_refused_before_anything_is_sent(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    with pytest.raises(ValueError, match=r"attachment name 'no spaces' must be 1–64 characters"):
        q.submit(1, attachments={"no spaces": b"x"})
    with pytest.raises(ValueError, match=r"17 attachments; a job takes at most 16"):
        q.submit(1, attachments={f"f{i}": b"x" for i in range(17)})
    with pytest.raises(TypeError, match=r"attachment x: expected bytes, a path"):
        q.submit(1, attachments={"x": 42})
    with pytest.raises(FileNotFoundError, match=r"attachment x: no such file"):
        q.submit(1, attachments={"x": "/no/such/file.png"})
    # Nothing was sent: the queue, made by a job's first submit, does not exist.
    with pytest.raises(SluiceApiError, match="does not exist"):
        q.list()


def test_a_failed_upload_fails_the_attempt(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)

    class Gone:
        blob_id = "no-such-blob"

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        try:
            ctx.attach("missing", Gone())
        except Exception:  # noqa: BLE001 - caught by the handler: the worker still fails the attempt
            pass
        return "would have succeeded"

    with q.work(handler):
        done = q.run(1, max_attempts=1, timeout=30)
    assert done.status == "failed"
    assert "blob" in done.error["message"].lower()
    assert done.output_attachments == {}
