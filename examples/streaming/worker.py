"""The streaming worker: tells a story from ``{"prompt": "…"}``, one token at a time, each sent to
the job's readers with ``ctx.emit()`` as it is made (the SDK batches them on the wire). The job's
output is the whole story.

    python3 -m sluice_client worker worker:story --queue stories

STORY_TOKEN_MS (default 40) paces the tokens, as a real model's speed would."""
from __future__ import annotations

import os
from typing import Any, Dict

from markov import generate
from sluice_client import NonRetryableError

TOKEN_SECONDS = float(os.environ.get("STORY_TOKEN_MS", "40")) / 1000


def story(job: Any, ctx: Any) -> Dict[str, str]:
    prompt = job.input.get("prompt") if isinstance(job.input, dict) else None
    if not isinstance(prompt, str) or not prompt.strip():
        raise NonRetryableError('input must be {"prompt": "<some words>"}')
    text = ""
    for token in generate(prompt):
        ctx.emit(token)
        text += token
        # Sleeps as a model would compute; wakes at once, and stops, when the job is canceled.
        if ctx.cancelled.wait(TOKEN_SECONDS):
            break
    return {"prompt": prompt, "text": text}
