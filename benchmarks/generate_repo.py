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


def _identifier(rng: random.Random) -> str:
    first, second = rng.sample(WORDS, 2)
    return first + second.capitalize()


def _javascript(rng: random.Random, lines: int, others: list[str]) -> str:
    out = ['const path = require("path")']
    if others:
        out.append(f'const peer = require("./{rng.choice(others)}")')
    while len(out) < lines:
        name = _identifier(rng)
        out.append(f"function {name}(req, res) {{")
        out.append(f"    const value = process.env.{rng.choice(WORDS).upper()}_SETTING")
        for _ in range(rng.randint(3, 8)):
            out.append(f"    // {' '.join(rng.choices(WORDS, k=8))}")
            out.append(f"    res.{rng.choice(WORDS)}({rng.choice(WORDS)}, value)")
        out.append("}")
        out.append(f'app.get("/{rng.choice(WORDS)}/{rng.choice(WORDS)}", {name})')
    return "\n".join(out[:lines]) + "\n"


def _python(rng: random.Random, lines: int) -> str:
    out = ["import os", "from pathlib import Path", ""]
    while len(out) < lines:
        name = "_".join(rng.sample(WORDS, 2))
        out.append(f"def {name}(request):")
        out.append(f'    """{" ".join(rng.choices(WORDS, k=10))}."""')
        for _ in range(rng.randint(3, 8)):
            out.append(f'    {rng.choice(WORDS)} = os.environ.get("{rng.choice(WORDS).upper()}")')
        out.append(f"    return {rng.choice(WORDS)}")
        out.append("")
    return "\n".join(out[:lines]) + "\n"


def _markdown(rng: random.Random, lines: int) -> str:
    out = [f"# {' '.join(rng.choices(WORDS, k=3)).title()}", ""]
    while len(out) < lines:
        if rng.random() < 0.1:
            out.append(f"## {' '.join(rng.choices(WORDS, k=2)).title()}")
        out.append(" ".join(rng.choices(WORDS, k=14)) + ".")
    return "\n".join(out[:lines]) + "\n"


def generate(root: Path, files: int, lines: int = 200, seed: int = 7) -> Path:
    """Write ``files`` files of about ``lines`` lines under ``root``."""
    rng = random.Random(seed)
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
            (directory / f"m{number}.js").write_text(_javascript(rng, lines, peers))
        elif kind == 2:
            (directory / f"m{number}.py").write_text(_python(rng, lines))
        else:
            (directory / f"m{number}.md").write_text(_markdown(rng, lines))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=200)
    args = parser.parse_args()
    generate(args.root, args.files, args.lines)


if __name__ == "__main__":
    main()
