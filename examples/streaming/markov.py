"""The "model": a word-level Markov chain of order 2, trained at start on corpus.txt (shipped with
the example, so nothing is downloaded). It generates a story one token at a time, the way a
language model does. Deterministic for a given prompt (a seeded generator), and the same
algorithm as markov.js, so both workers tell the same story for the same prompt."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

CORPUS = (Path(__file__).parent / "corpus.txt").read_text(encoding="utf-8")
MASK = 0xFFFFFFFF


def train(text: str) -> Tuple[Dict[str, List[str]], List[str]]:
    """"w1 w2" → the words that followed that pair in the corpus, in order, repeats kept; and the
    pairs a sentence may start with."""
    words = text.split()
    chain: Dict[str, List[str]] = {}
    for i in range(len(words) - 2):
        chain.setdefault(f"{words[i]} {words[i + 1]}", []).append(words[i + 2])
    starts = [f"{words[i]} {words[i + 1]}" for i in range(len(words) - 1) if i == 0 or re.search(r"[.!?]$", words[i - 1])]
    return chain, starts


def _seed_of(prompt: str) -> int:
    """FNV-1a of the prompt: the seed, so a prompt always gives the same story."""
    h = 0x811C9DC5
    for byte in prompt.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & MASK
    return h


def _imul(a: int, b: int) -> int:
    return (a * b) & MASK


def _random(seed: int) -> Callable[[], float]:
    """mulberry32, as markov.js has it: floats in [0, 1)."""
    state = [seed & MASK]

    def next_float() -> float:
        state[0] = (state[0] + 0x6D2B79F5) & MASK
        t = state[0]
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & MASK
        return ((t ^ (t >> 14)) & MASK) / 4294967296

    return next_float


CHAIN, STARTS = train(CORPUS)


def generate(prompt: str, min_tokens: int = 30, max_tokens: int = 80) -> Iterator[str]:
    """The story's tokens (each a word with its leading space). Starts from the prompt's last two
    words when the corpus has them, else from a sentence start; stops at the end of a sentence
    once ``min_tokens`` are out, or at ``max_tokens``."""
    rand = _random(_seed_of(prompt))
    words = prompt.split()
    key = f"{words[-2]} {words[-1]}" if len(words) >= 2 else ""
    if key not in CHAIN:
        key = STARTS[int(rand() * len(STARTS))]
        yield f" {key}"
    for n in range(max_tokens):
        following = CHAIN.get(key)
        if not following:
            return
        word = following[int(rand() * len(following))]
        yield f" {word}"
        if n + 1 >= min_tokens and re.search(r"[.!?]$", word):
            return
        key = f"{key.split(' ')[1]} {word}"
