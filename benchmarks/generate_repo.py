"""Generate a synthetic repository for benchmarks: JavaScript, Python and Markdown files.

Deterministic for a given seed, so figures are comparable between runs.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

WORDS = [
    "deploy",
    "webhook",
    "signature",
    "verify",
    "slack",
    "command",
    "handler",
    "route",
    "status",
    "metrics",
    "logs",
    "error",
    "config",
    "session",
    "token",
    "cache",
    "retry",
    "queue",
    "worker",
    "schedule",
    "page",
    "user",
    "channel",
    "team",
    "release",
    "build",
    "index",
    "chunk",
    "score",
    "query",
    "parse",
    "import",
    "export",
    "module",
    "service",
    "request",
    "response",
    "body",
    "header",
    "timeout",
    "limit",
    "budget",
    "context",
    "answer",
    "source",
    "image",
    "health",
    "audit",
    "allow",
    "block",
]


_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "ze",
    "bel",
    "cor",
    "dan",
    "fin",
    "gal",
    "hex",
    "jot",
    "kip",
    "lum",
    "mor",
    "nix",
    "pax",
]


def vocabulary(size: int, seed: int = 11) -> list[str]:
    """The domain words first, then made-up words: a vocabulary of ``size`` distinct words."""
    rng = random.Random(seed)
    words = list(WORDS)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Zipf:
    """Words drawn with probability falling as 1/rank, as in natural text and code."""

    def __init__(self, words: list[str], rng: random.Random) -> None:
        self.words = words
        self.rng = rng
        self.weights = [1.0 / rank for rank in range(1, len(words) + 1)]
        total = 0.0
        self.cumulative = []
        for weight in self.weights:
            total += weight
            self.cumulative.append(total)

    def choices(self, k: int) -> list[str]:
        """``k`` words drawn with replacement."""
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=k)

    def choice(self) -> str:
        """One word."""
        return self.choices(1)[0]


def _identifier(words: Zipf) -> str:
    first, second = words.choices(2)
    return first + second.capitalize()


def _javascript(rng: random.Random, words: Zipf, lines: int, others: list[str]) -> str:
    out = ['const path = require("path")']
    if others:
        out.append(f'const peer = require("./{rng.choice(others)}")')
    while len(out) < lines:
        name = _identifier(words)
        out.append(f"function {name}(req, res) {{")
        out.append(f"    const value = process.env.{words.choice().upper()}_SETTING")
        for _ in range(rng.randint(3, 8)):
            out.append(f"    // {' '.join(words.choices(8))}")
            out.append(f"    res.{words.choice()}({words.choice()}, value)")
        out.append("}")
        out.append(f'app.get("/{words.choice()}/{words.choice()}", {name})')
    return "\n".join(out[:lines]) + "\n"


def _python(rng: random.Random, words: Zipf, lines: int) -> str:
    out = ["import os", "from pathlib import Path", ""]
    while len(out) < lines:
        name = "_".join(words.choices(2))
        out.append(f"def {name}(request):")
        out.append(f'    """{" ".join(words.choices(10))}."""')
        for _ in range(rng.randint(3, 8)):
            out.append(f'    {words.choice()} = os.environ.get("{words.choice().upper()}")')
        out.append(f"    return {words.choice()}")
        out.append("")
    return "\n".join(out[:lines]) + "\n"


def _markdown(rng: random.Random, words: Zipf, lines: int) -> str:
    out = [f"# {' '.join(words.choices(3)).title()}", ""]
    while len(out) < lines:
        if rng.random() < 0.1:
            out.append(f"## {' '.join(words.choices(2)).title()}")
        out.append(" ".join(words.choices(14)) + ".")
    return "\n".join(out[:lines]) + "\n"


def generate(
    root: Path, files: int, lines: int = 200, seed: int = 7, vocabulary_size: int = 5000
) -> Path:
    """Write ``files`` files of about ``lines`` lines under ``root``.

    Words follow a Zipf distribution over ``vocabulary_size`` words; a tiny vocabulary (say
    50) makes every question term occur in nearly every chunk, a worst case for search.
    """
    rng = random.Random(seed)
    words = Zipf(vocabulary(vocabulary_size), rng)
    root.mkdir(parents=True, exist_ok=True)
    per_directory = 50
    for number in range(files):
        directory = root / f"pkg{number // per_directory:03d}"
        directory.mkdir(exist_ok=True)
        kind = number % 4
        if kind in (0, 1):
            peers = [f"m{peer}" for peer in range(max(0, number - 3), number) if peer % 4 in (0, 1)]
            peers = [
                peer for peer in peers if int(peer[1:]) // per_directory == number // per_directory
            ]
            (directory / f"m{number}.js").write_text(_javascript(rng, words, lines, peers))
        elif kind == 2:
            (directory / f"m{number}.py").write_text(_python(rng, words, lines))
        else:
            (directory / f"m{number}.md").write_text(_markdown(rng, words, lines))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--vocabulary", type=int, default=5000)
    args = parser.parse_args()
    generate(args.root, args.files, args.lines, vocabulary_size=args.vocabulary)


if __name__ == "__main__":
    main()
