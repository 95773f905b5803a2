"""What kind of file a path is, as far as ranking cares, and what a question asks about.

Tests, release notes, licences and other community files match many questions' words and
answer few of them; the ``bm25`` ranker demotes tests and release notes unless the question
asks about them, and leaves licences and community files out unless it does.
"""

from __future__ import annotations

import functools
import re

from szrag.base.text import SOURCE_TYPES, is_test_path

_ASKS_ABOUT_TESTS = re.compile(r"\b(tests?|testing|tested|specs?|fixtures?)\b", re.IGNORECASE)
_ASKS_ABOUT_RELEASES = re.compile(
    r"\b(changelog|changes? ?log|releases?|released|release notes|what'?s ?new|news|history"
    r"|upgrad(e|ing) (to|from)|since (version|v?\d)|what (has |have )?changed"
    r"|v?\d+\.\d+\.\d+)\b",
    re.IGNORECASE,
)
_RELEASE_NOTES_FILE = re.compile(
    r"(^|/)(change[s_-]?log|changes|history|news|releases?|release[_-]?notes|whats_?new)"
    r"([._-][^/]*)?$",
    re.IGNORECASE,
)
_RELEASE_NOTES_FOLDER = re.compile(
    r"(^|/)(changelog\.d|changes|whatsnew|release[_-]?notes|releases|changelogs?)/", re.IGNORECASE
)
_PROSE_TYPES = frozenset({"markdown", "text"})
_BOILERPLATE_FILE = re.compile(
    r"(^|/)(licen[cs]e|copying|notice|authors|contributors|code[_-]of[_-]conduct|conduct)"
    r"([._-][^/]*)?$",
    re.IGNORECASE,
)
_ASKS_ABOUT_BOILERPLATE = re.compile(
    r"\b(licen[cs]e[sd]?|copyright|conduct|authors?|contributors?)\b", re.IGNORECASE
)


is_test = is_test_path  # the structure graph asks it too, and cannot import rank


@functools.lru_cache(maxsize=1 << 16)  # asked of every candidate file of every question
def is_release_notes(path: str, file_type: str) -> bool:
    """A changelog, release notes or history file: it names every change, so it matches
    questions about the code better than the code does."""
    if _RELEASE_NOTES_FOLDER.search(path):
        return True
    return file_type in _PROSE_TYPES and bool(_RELEASE_NOTES_FILE.search(path))


@functools.lru_cache(maxsize=1 << 16)  # asked of every candidate file of every question
def is_boilerplate(path: str) -> bool:
    """A licence or community file (code of conduct, authors, notice)."""
    return bool(_BOILERPLATE_FILE.search(path))


def is_code(file_type: str) -> bool:
    """Source code of a programming language (not prose, data or configuration)."""
    return file_type in SOURCE_TYPES


def asks_about_tests(question: str) -> bool:
    """The question is about tests or fixtures."""
    return bool(_ASKS_ABOUT_TESTS.search(question))


def asks_about_releases(question: str) -> bool:
    """The question is about releases, versions or what changed."""
    return bool(_ASKS_ABOUT_RELEASES.search(question))


def asks_about_boilerplate(question: str) -> bool:
    """The question is about the licence, authors or conduct."""
    return bool(_ASKS_ABOUT_BOILERPLATE.search(question))
