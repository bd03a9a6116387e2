"""Prints held-out image number N (default 0) as a submit body, ``{"pixels": [...]}``; its true
digit goes to stderr. The model never saw it in training.

    python3 sample.py 7
"""
import json
import sys

import digits

index = int(sys.argv[1]) if len(sys.argv) > 1 else 0
pixels, label = digits.held_out(index)
print(json.dumps({"pixels": pixels}))
print(f"held-out image {index} is a {label}", file=sys.stderr)
