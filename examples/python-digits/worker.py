"""The worker: ``python3 -m sluice_client worker worker:predict --queue digits``. The model is
trained once, when this module is imported (at worker start), then each job is one prediction.

Input ``{"pixels": [64 numbers, 0–16, row by row]}`` → output ``{"digit": 0–9, "confidence": 0–1}``.
``predict_batch`` is the batch variant (``--batch-size 32``): one model call per batch.
"""
import math
import sys

from sluice_client import BatchItemError, NonRetryableError

import digits

MODEL, ACCURACY = digits.train()
print(f"digits model trained: {ACCURACY:.1%} accurate on the held-out images", file=sys.stderr, flush=True)


def pixels_of(job):
    """The job's 64 pixels, or NonRetryableError: a malformed input fails the same way every attempt."""
    pixels = job.input.get("pixels") if isinstance(job.input, dict) else None
    if (
        not isinstance(pixels, list)
        or len(pixels) != 64
        or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and 0 <= p <= 16 for p in pixels)
    ):
        raise NonRetryableError('input must be {"pixels": [64 numbers in 0–16, row by row]}')
    return pixels


def answer(probabilities):
    best = max(range(len(probabilities)), key=lambda i: probabilities[i])
    return {"digit": int(MODEL.classes_[best]), "confidence": round(float(probabilities[best]), 4)}


def predict(job, ctx):
    pixels = pixels_of(job)
    ctx.progress(0.5)
    return answer(MODEL.predict_proba([pixels])[0])


def predict_batch(jobs):
    results, rows, positions = [None] * len(jobs), [], []
    for i, job in enumerate(jobs):
        try:
            rows.append(pixels_of(job))
            positions.append(i)
        except NonRetryableError as err:
            results[i] = BatchItemError(str(err), retryable=False)
    if rows:
        for i, probabilities in zip(positions, MODEL.predict_proba(rows)):
            results[i] = answer(probabilities)
    return results
