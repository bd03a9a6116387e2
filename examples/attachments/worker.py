"""The attachments worker: ``{}`` with an attachment ``image`` (a PGM picture) → the picture's
edges, attached to the result as ``edges``; the job's output says what it found.

    python3 -m sluice_client worker worker:edges --queue edges"""
from __future__ import annotations

from typing import Any, Dict

from edges import edge_count, parse_pgm, sobel, write_pgm
from sluice_client import NonRetryableError


def edges(job: Any, ctx: Any) -> Dict[str, int]:
    image = ctx.attachments.get("image")
    if image is None:
        raise NonRetryableError("attach the picture as `image`")
    result = sobel(parse_pgm(image.bytes()))
    ctx.attach("edges", write_pgm(result), content_type="image/x-portable-graymap")
    return {"width": result.width, "height": result.height, "edgePixels": edge_count(result)}
