"""The client: submits a prompt and prints the story's tokens as they come.

    python3 client.py "In the morning"

SLUICE_URL picks the server (default http://127.0.0.1:9324)."""
from __future__ import annotations

import os
import sys

from sluice_client import Sluice


def main() -> None:
    prompt = " ".join(sys.argv[1:]) or "In the morning"
    sluice = Sluice(os.environ.get("SLUICE_URL", "http://127.0.0.1:9324"))
    job = sluice.queue("stories").submit({"prompt": prompt})
    print(prompt, end="", flush=True)
    tokens = 0
    # The job's tokens as they come; ends when the job does, raises if it fails.
    for token in job.stream():
        print(token, end="", flush=True)
        tokens += 1
    print(f"\n({tokens} tokens)")


if __name__ == "__main__":
    main()
