"""Seeded, typing-like random edits of a source file: what a file looks like between keystrokes.

Shared by `bench_fuzz.py` (10,000 edits, by hand) and `tests/test_fuzz.py` (a few hundred, in
the suite). Deterministic for a given seed: `edits(source, seed)` yields the same texts on every
machine and Python version (only `random.Random` with an integer seed is used).
"""

from __future__ import annotations

import random
from typing import Iterator

JUNK = ["(", ")", "[", "]", "{", "}", ":", ",", " ", "\t", '"', "'", "#", "\\", "=", ".", "x", "1",
        "\n", "@", "*", "acc_ref", "plgpu.", "jnp.float", "...", "lambda", "\u00e9", "\U0001F600"]
PARTIALS = ["def ", "def f(", "if x", "for i in", "with ", "class A(", "return (", "acc_ref[...] = ",
            "plgpu.wgmma(acc_ref, ", "@functools.partial(", "else", "try:", "x = [1,", "'''", "lambda :"]


KINDS = ["cut line", "deleted char", "inserted token", "duplicated line", "indentation",
         "deleted line", "swapped lines", "unclosed bracket", "started statement", "cut word"]


def mutate(source: str, rng: random.Random) -> str:
    """One to three edits of the kinds a person typing makes (or a bad paste)."""
    return mutate_described(source, rng)[0]


def mutate_described(source: str, rng: random.Random) -> tuple[str, list[tuple[str, int]]]:
    """`mutate`, and what it did: (kind, 0-based line of the original text) per edit. Draws the
    same random numbers as `mutate`, so both give the same texts for a seed."""
    lines = source.split("\n")
    done: list[tuple[str, int]] = []
    for _ in range(rng.randint(1, 3)):
        if not lines:
            lines = [""]
        k = rng.randrange(len(lines))
        line = lines[k]
        kind = rng.randrange(10)
        if kind == 0:  # a half-typed line
            lines[k] = line[: rng.randrange(len(line) + 1)]
        elif kind == 1 and line:  # a deleted character
            i = rng.randrange(len(line))
            lines[k] = line[:i] + line[i + 1:]
        elif kind == 2:  # an inserted character or token
            i = rng.randrange(len(line) + 1)
            lines[k] = line[:i] + rng.choice(JUNK) + line[i:]
        elif kind == 3:  # a duplicated line
            lines.insert(k, line)
        elif kind == 4:  # indentation changed
            lines[k] = " " * rng.randint(1, 4) + line if rng.random() < 0.5 else line[rng.randint(1, 4):]
        elif kind == 5 and len(lines) > 1:  # a deleted line
            del lines[k]
        elif kind == 6 and k + 1 < len(lines):  # two lines swapped
            lines[k], lines[k + 1] = lines[k + 1], line
        elif kind == 7:  # an unclosed bracket
            lines[k] = line + rng.choice(["(", "[", "{", "(\n"])
        elif kind == 8:  # a statement being started
            indent = line[: len(line) - len(line.lstrip())]
            lines.insert(k, indent + rng.choice(PARTIALS))
        else:  # a word cut short
            words = line.split(" ")
            j = rng.randrange(len(words))
            words[j] = words[j][: rng.randrange(len(words[j]) + 1)]
            lines[k] = " ".join(words)
        done.append((KINDS[kind], k))
    return "\n".join(lines), done


def edits(source: str, seed: int, count: int) -> Iterator[str]:
    """`count` independent mutations of `source` (each from the original text)."""
    rng = random.Random(seed)
    for _ in range(count):
        yield mutate(source, rng)
