"""Build the real-history evaluation set from bare git mirrors of public repositories.

Each case is a question a developer really wrote about a repository, paired with the files
that answered it: a pull-request title (a squash commit's subject, or the title GitHub puts
in a merge commit's body) or a commit subject, and the non-test source files that change
modified. The question is asked against the tree at the parent commit, so the answer is
the code as it stood when the question was asked.

The script is deterministic: the same mirrors give the same cases, in the same order. It
writes, under ``--out``:

* ``cases.jsonl``: one case per line (``id``, ``question``, ``files``, ``root``, ``class``
  ``history``, ``dataset``, ``revision``, ``hunks``: each gold file's old-side line ranges
  from ``git diff -U0``, the lines the change touched), in history order per repository, so consecutive
  cases differ by small checkouts and the index refreshes incrementally;
* ``trees/<dataset>/``: a shared clone of each mirror (objects borrowed from the mirror),
  which ``szrag eval`` checks out at each case's revision.

Nothing it writes belongs in the szrag repository: the trees and questions are other
projects' text. Run it by hand (it needs the mirrors); CI keeps small fixtures instead::

    python eval/prepare_history.py --mirrors /path/to/mirrors --out ~/.cache/szrag/history
    szrag eval ~/.cache/szrag/history/cases.jsonl --ranker bm25 --ranker spec --ranker files
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

# (dataset, owner+name mirror folder, language)
REPOSITORIES: tuple[tuple[str, str, str], ...] = (
    ("httpx", "encode+httpx", "python"),
    ("click", "pallets+click", "python"),
    ("sqlite-utils", "simonw+sqlite-utils", "python"),
    ("llm", "simonw+llm", "python"),
    ("aider", "Aider-AI+aider", "python"),
    ("koa", "koajs+koa", "javascript"),
    ("fastify", "fastify+fastify", "javascript"),
    ("hono", "honojs+hono", "typescript"),
    ("cobra", "spf13+cobra", "go"),
    ("bat", "sharkdp+bat", "rust"),
    ("gson", "google+gson", "java"),
)
# held out in languages the set above lacks, prepared apart (``--more-languages``) so the
# figures of the set above stay comparable from run to run
MORE_LANGUAGES: tuple[tuple[str, str, str], ...] = (
    ("jq", "jqlang+jq", "c"),
    ("fmt", "fmtlib+fmt", "cpp"),
    ("rack", "rack+rack", "ruby"),
    ("guzzle", "guzzle+guzzle", "php"),
    ("polly", "App-vNext+Polly", "csharp"),
    ("okhttp", "square+okhttp", "kotlin"),
    ("alamofire", "Alamofire+Alamofire", "swift"),
)
MAX_CASES_PER_REPOSITORY = 40
MAX_GOLD_FILES = 4  # a focused change: the files an engineer would open for that question
MAX_CHANGED_SOURCES = 8
MIN_QUESTION_WORDS = 3
HISTORY_DEPTH = 4000  # first-parent commits looked at per repository, newest first

SOURCE_EXTENSIONS = frozenset(
    {".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts"}
    | {".go", ".rs", ".java", ".vue", ".svelte"}
)
MORE_EXTENSIONS = SOURCE_EXTENSIONS | frozenset(
    {
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".rb",
        ".php",
        ".cs",
        ".kt",
        ".kts",
        ".swift",
    }
)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|Tests?|__tests__|spec|specs|testdata|testing|fixtures|e2e|benchmarks?)/"
    r"|(^|/)(test_[^/]*|conftest\.py)$|_test\.(go|py)$|[._-](test|spec|bench)\.[a-z]+$"
    r"|(^|/)[\w.]+\.(Tests?|Specs?|Benchmarks?)/|(Tests?|Specs?)\.cs$"  # C#'s test projects
    r"|(^|/)src/\w+Test/"  # Kotlin's and Gradle's test source sets (jvmTest, androidTest)
)
_NOT_SOURCE_PATH = re.compile(
    r"(^|/)(docs?|examples?|vendor|third_party|dist|build|\.github|scripts?)/"
    r"|\.min\.js$|_pb2\.py$|\.d\.ts$"
)
_NOISE = re.compile(
    r"^(v?\d+(\.\d+)+\S*$|merge (branch|remote)|revert\b|release\b|bump\b|update dependencies"
    r"|(set|update|change) (the )?version\b)"
    r"|\b(bump(s|ed)?|dependabot|deps|dependenc(y|ies)|changelog|typos?|lint(ing|er)?|"
    r"format(ting)?|prettier|ruff|mypy|isort|flake8|copyright|licen[cs]e|readme|"
    r"version \d|wip|github actions?|ci)\b",
    re.IGNORECASE,
)
_CHORE_PREFIX = re.compile(
    r"^(chore|ci|build|docs?|style|test|tests|refactor|release)(\(.*?\))?!?:"
)
_MERGE_PR = re.compile(r"^Merge pull request #\d+ from ")


@dataclass(frozen=True, slots=True)
class Case:
    """One question, its answering files, and the tree it is asked against."""

    id: str
    question: str
    files: tuple[str, ...]
    dataset: str
    revision: str
    # per gold file, the old-side line ranges the change touched (1-based, inclusive)
    hunks: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()


_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


def old_side_ranges(diff: str) -> tuple[tuple[int, int], ...]:
    """The old-side line ranges of a ``git diff -U0``; a pure insertion after line ``a``
    counts its two neighbours, ``a`` and ``a + 1``."""
    ranges: list[tuple[int, int]] = []
    for match in _HUNK_HEADER.finditer(diff):
        start = int(match.group(1))
        count = 1 if match.group(2) is None else int(match.group(2))
        if count == 0:
            ranges.append((max(start, 1), start + 1))
        else:
            ranges.append((start, start + count - 1))
    return tuple(ranges)


def gold_hunks(
    mirror: Path, parent: str, commit: str, paths: Sequence[str]
) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """Each gold file's old-side hunks between ``parent`` and ``commit``."""
    hunks = []
    for path in paths:
        diff = git(mirror, "diff", "-U0", "--no-renames", parent, commit, "--", path)
        ranges = old_side_ranges(diff)
        if ranges:
            hunks.append((path, ranges))
    return tuple(hunks)


def git(repository: Path, *arguments: str) -> str:
    """Run git in ``repository`` and return its output (errors stop the script)."""
    completed = subprocess.run(
        ["git", "-C", str(repository), *arguments],
        check=True,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    return completed.stdout


def first_parent_commits(mirror: Path) -> Iterator[tuple[str, list[str], str, str]]:
    """(commit, parents, subject, body) along the default branch, newest first."""
    out = git(
        mirror, "log", "--first-parent", f"-n{HISTORY_DEPTH}", "--format=%H%x00%P%x00%s%x00%b%x1e",
        "HEAD",
    )  # fmt: skip
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        commit, parents, subject, body = [*record.split("\x00"), "", "", ""][:4]
        yield commit, parents.split(), subject.strip(), body.strip()


def question_of(subject: str, body: str) -> str | None:
    """The question a commit stands for: a merge's PR title, else the subject."""
    if _MERGE_PR.match(subject):
        title = next((line.strip() for line in body.splitlines() if line.strip()), "")
        return title or None
    if subject.startswith("Merge "):
        return None
    return subject


def acceptable(question: str) -> bool:
    """A question a person would ask about the code, not release or housekeeping noise."""
    if _NOISE.search(question) or _CHORE_PREFIX.match(question.lower()):
        return False
    return len(re.findall(r"[A-Za-z]{2,}", question)) >= MIN_QUESTION_WORDS


def is_source(path: str, extensions: frozenset[str] = SOURCE_EXTENSIONS) -> bool:
    """A non-test, non-generated source file of one of the evaluated languages."""
    dot = path.rfind(".")
    if dot < 0 or path[dot:].lower() not in extensions:
        return False
    return not _TEST_PATH.search(path) and not _NOT_SOURCE_PATH.search(path)


def changed_files(mirror: Path, parent: str, commit: str) -> list[tuple[str, str]]:
    """(status letter, path) of every file the change touched, renames not followed."""
    out = git(mirror, "diff", "--no-renames", "--name-status", parent, commit)
    pairs = []
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        if path:
            pairs.append((status[:1], path))
    return pairs


def cases_of(
    dataset: str, mirror: Path, extensions: frozenset[str] = SOURCE_EXTENSIONS
) -> list[Case]:
    """The newest eligible cases of one repository, oldest first."""
    found: list[Case] = []
    seen_questions: set[str] = set()
    for commit, parents, subject, body in first_parent_commits(mirror):
        if len(found) >= MAX_CASES_PER_REPOSITORY:
            break
        if not parents:
            continue
        question = question_of(subject, body)
        if not question or not acceptable(question):
            continue
        # one case per wording: "fix X (#12)" and "fix X (#34)" are the same question
        key = re.sub(r"[\d.#]+", "#", question.lower())
        if key in seen_questions:
            continue
        changes = changed_files(mirror, parents[0], commit)
        sources = [path for status, path in changes if is_source(path, extensions)]
        gold = [path for status, path in changes if status == "M" and is_source(path, extensions)]
        if not gold or len(gold) > MAX_GOLD_FILES or len(sources) > MAX_CHANGED_SOURCES:
            continue
        seen_questions.add(key)
        hunks = gold_hunks(mirror, parents[0], commit, gold)
        found.append(
            Case(f"{dataset}-{commit[:10]}", question, tuple(gold), dataset, parents[0], hunks)
        )
    found.reverse()  # oldest first: each checkout moves the tree forward a little
    return found


def missing_paths(mirror: Path, revisions: Sequence[str]) -> list[str]:
    """Paths whose content the mirror lacks at any of ``revisions`` (a mirror may leave out
    its largest files); a checkout must skip them."""
    missing: set[str] = set()
    for revision in revisions:
        for line in git(mirror, "ls-tree", "-r", "-l", "--full-tree", revision).splitlines():
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) == 4 and parts[1] == "blob" and parts[3] == "BAD":
                missing.add(path)
    return sorted(missing)


def _sparse_pattern(path: str) -> str:
    escaped = re.sub(r"([*?\[\\!#])", r"\\\1", path)
    return f"!/{escaped}"


def prepare_tree(mirror: Path, tree: Path, revisions: Sequence[str]) -> None:
    """A clone of ``mirror`` at ``tree`` that borrows its objects (no copy of the history),
    its checkouts leaving out files the mirror does not hold."""
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(tree)],
            check=True,
        )
    else:
        git(tree, "fetch", "--quiet", str(mirror), "+HEAD:refs/remotes/mirror/HEAD")
    missing = missing_paths(mirror, revisions)
    if missing:
        patterns = ["/*", *(_sparse_pattern(path) for path in missing)]
        git(tree, "sparse-checkout", "set", "--no-cone", *patterns)


def write_cases(out: Path, cases: Sequence[Case]) -> Path:
    """Write ``cases.jsonl`` with roots relative to it."""
    path = out / "cases.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for case in cases:
            record = {
                "id": case.id,
                "question": case.question,
                "files": list(case.files),
                "root": f"trees/{case.dataset}",
                "class": "history",
                "dataset": case.dataset,
                "revision": case.revision,
                "hunks": {path: [list(span) for span in spans] for path, spans in case.hunks},
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of owner+name/ mirrors")
    parser.add_argument("--out", type=Path, required=True, help="where cases and trees go")
    parser.add_argument("--only", action="append", default=[], help="dataset(s) to prepare")
    parser.add_argument(
        "--more-languages",
        action="store_true",
        help="the held-out C, C++, Ruby, PHP, C#, Kotlin and Swift repositories (another --out)",
    )
    options = parser.parse_args(argv)
    repositories, extensions = (
        (MORE_LANGUAGES, MORE_EXTENSIONS)
        if options.more_languages
        else (REPOSITORIES, SOURCE_EXTENSIONS)
    )
    out: Path = options.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    every: list[Case] = []
    for dataset, folder, language in repositories:
        if options.only and dataset not in options.only:
            continue
        mirror = options.mirrors / folder / "repo"
        if not mirror.is_dir():
            mirror = options.mirrors / folder
        if not (mirror / "HEAD").is_file() and not (mirror / ".git").exists():
            print(f"{dataset}: no mirror at {mirror}; skipped", file=sys.stderr)
            continue
        cases = cases_of(dataset, mirror, extensions)
        prepare_tree(mirror, out / "trees" / dataset, [case.revision for case in cases])
        every.extend(cases)
        print(f"{dataset:14} {language:11} {len(cases):4} cases")
    path = write_cases(out, every)
    print(f"{'all':26} {len(every):4} cases -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
