"""The client: sends a picture as the job's attachment and saves the worker's result.

    python3 client.py shapes.pgm edges.pgm

SLUICE_URL picks the server (default http://127.0.0.1:9324)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from sluice_client import Sluice


def main() -> None:
    source = Path(sys.argv[1] if len(sys.argv) > 1 else "shapes.pgm")
    target = sys.argv[2] if len(sys.argv) > 2 else "edges.pgm"
    sluice = Sluice(os.environ.get("SLUICE_URL", "http://127.0.0.1:9324"))
    # The file is streamed from disk to the server's blob store; the job carries its id.
    job = sluice.queue("edges").submit({}, attachments={"image": source})
    sent = job.attachments["image"]
    print(f"sent {source.name}: {sent.size} bytes, {sent.content_type}")
    done = job.wait()
    if done.status != "succeeded":
        raise SystemExit(f"the job {done.status}: {done.error}")
    edges = done.output_attachments["edges"]
    edges.save(target)  # streamed to disk, checked against the blob's SHA-256 on the way
    out = done.output
    print(f"{target}: {out['width']}×{out['height']}, {out['edgePixels']} edge pixels, {edges.size} bytes, sha256 {edges.sha256[:12]}…")


if __name__ == "__main__":
    main()
