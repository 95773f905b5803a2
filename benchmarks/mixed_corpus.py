"""The mixed benchmark corpus: twelve public repositories side by side in one git repository
(about 9,000 files: Python, JavaScript and TypeScript, docs, tests, configuration).

Nothing of it is committed: the corpus is built here from git mirrors, each repository's tree
at its newest commit (``git archive``, no history), under ``benchmarks/.work/mixed``.

    python benchmarks/mixed_corpus.py [--mirrors DIR] [--copies N | --large | --larger] [--out DIR]

``--mirrors`` is a directory of bare mirrors named ``owner+name/repo`` (as a mirror of a public
repository is laid out here) or ``owner+name.git``; ``--copies 2`` or ``4`` repeats the corpus
for growth figures; ``--large`` adds three larger repositories (about 25,000 files in all: Python,
Go, TypeScript and Svelte) under ``benchmarks/.work/mixed-large``, the corpus growth is measured on;
``--larger`` adds three more to those (about 54,000 files: Java, PHP and Ruby) under
``benchmarks/.work/mixed-larger``.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
from pathlib import Path

WORK = Path(__file__).parent / ".work"
DEFAULT_MIRRORS = Path("/work/.mirror")
REPOSITORIES = (
    "sphinx-doc/sphinx",
    "pylint-dev/pylint",
    "pytest-dev/pytest",
    "thelounge/thelounge",
    "expressjs/express",
    "pallets/flask",
    "psf/requests",
    "Aider-AI/aider",
    "simonw/llm",
    "simonw/sqlite-utils",
    "encode/httpx",
    "pallets/click",
)
LARGE_EXTRA = ("ansible/ansible", "sveltejs/svelte", "prometheus/prometheus")
# about 54,000 files in all with the large corpus's: Java, PHP and Ruby beside them
LARGER_EXTRA = ("spring-projects/spring-framework", "symfony/symfony", "rails/rails")


def mirror_of(repository: str, mirrors: Path) -> Path:
    """The bare mirror of ``owner/name`` under ``mirrors``."""
    stem = repository.replace("/", "+")
    for candidate in (mirrors / stem / "repo", mirrors / f"{stem}.git", mirrors / stem):
        if (candidate / "HEAD").is_file():
            return candidate
    raise SystemExit(f"no mirror of {repository} under {mirrors} (clone it with --mirror there)")


def export(mirror: Path, destination: Path, revision: str = "HEAD") -> int:
    """Write the tree of ``mirror`` at ``revision`` (default its newest) to ``destination``;
    the number of files written.

    A mirror may lack its largest blobs (media kept out of a partial clone): those files are
    left out, as a checkout without them would."""
    git = ["git", "--git-dir", str(mirror)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", revision], check=True, capture_output=True
    ).stdout
    entries: list[tuple[str, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            entries.append((sha.decode(), raw_path.decode("utf-8", "surrogateescape")))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in entries).encode(),
        check=True,
        capture_output=True,
    ).stdout
    stream = io.BytesIO(batch)
    written = 0
    for _, path in entries:
        header = stream.readline().split()
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
            continue
        data = stream.read(int(header[2]))
        stream.read(1)  # the newline after each object
        target = destination / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    return written


def build(
    out: Path, mirrors: Path, copies: int = 1, repositories: tuple[str, ...] = REPOSITORIES
) -> Path:
    """The corpus at ``out`` (built once; a complete one is reused)."""
    done = out / ".corpus-complete"
    if done.is_file():
        return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    total = 0
    for copy in range(copies):
        for repository in repositories:
            name = repository.split("/")[1]
            folder = out / name if copies == 1 else out / f"copy{copy + 1}" / name
            total += export(mirror_of(repository, mirrors), folder)
    subprocess.run(["git", "init", "-q", str(out)], check=True)
    done.write_text(f"{total} files\n", encoding="utf-8")
    (out / ".git" / "info").mkdir(parents=True, exist_ok=True)
    with (out / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
        exclude.write("/.corpus-complete\n")
    print(f"built {out}: {total} files from {len(repositories)} repositories", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--copies", type=int, default=1, choices=(1, 2, 4))
    parser.add_argument("--large", action="store_true", help="add " + ", ".join(LARGE_EXTRA))
    parser.add_argument(
        "--larger", action="store_true", help="add those and " + ", ".join(LARGER_EXTRA)
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if (args.large or args.larger) and args.copies != 1:
        parser.error("--large and --larger build one copy")
    if args.larger:
        out = args.out or WORK / "mixed-larger"
        extra = LARGE_EXTRA + LARGER_EXTRA
        print(build(out, args.mirrors, repositories=REPOSITORIES + extra))
        return
    if args.large:
        out = args.out or WORK / "mixed-large"
        print(build(out, args.mirrors, repositories=REPOSITORIES + LARGE_EXTRA))
        return
    out = args.out or WORK / ("mixed" if args.copies == 1 else f"mixed-x{args.copies}")
    print(build(out, args.mirrors, args.copies))


if __name__ == "__main__":
    main()
