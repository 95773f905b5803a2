"""What a question asks about, as the ``bm25`` ranker reads it: content terms and named
identifiers."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from szrag.base.text import code_terms, symbol_key

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "lets",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "explain",
        "tell",
        "show",
        "find",
        "happen",
        "happens",
        "happening",
        "work",
        "works",
        "working",
        "used",
        "use",
        "uses",
        "using",
        "file",
        "files",
        "code",
        "implemented",
        "implement",
        "implementation",
        "handled",
        "handle",
        "handles",
        "does",
        "done",
        "repository",
        "repo",
        "project",
        "please",
        "way",
        "ways",
    ]
)


def _function_words() -> dict[str, frozenset[str]]:
    """Per language code, its function words (``function_words.txt``)."""
    text = (Path(__file__).parent / "function_words.txt").read_text(encoding="utf-8")
    languages: dict[str, frozenset[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            code, _, listed = line.partition(":")
            languages[code.strip()] = frozenset(listed.split())
    return languages


FUNCTION_WORDS = _function_words()


def other_language_words(question: str) -> frozenset[str]:
    """The function words of each language besides English the question is written in: one
    whose function words it holds two or more of, and more of them than of English's
    (``wie``, ``der``, ``die`` in "wie prüft der deploy webhook die Signatur?"). Such
    words are no topic; in an English question they are the words they are (``del``,
    ``os``, ``die``)."""
    asked = set(_TERM.findall(without_accents(question).lower()))
    english = len(asked & STOPWORDS)
    found: set[str] = set()
    for words in FUNCTION_WORDS.values():
        held = len(asked & words)
        if held >= 2 and held > english:
            found |= words
    return frozenset(found)


_TERM = re.compile(r"[a-z0-9]+")
_COMPOUND = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[a-z0-9][A-Z]|_[A-Za-z0-9])[A-Za-z0-9_]*\b")
_CODE_SPAN = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
_CALLED = re.compile(r"\b([A-Za-z_][\w.]*)\(\)")
ROUTE = re.compile(r"(?<![\w.])/[A-Za-z0-9_\-./:{}<>]*")
ENVIRONMENT = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")


def query_terms(question: str) -> list[str]:
    """The content terms of a question, code-aware, in first-seen order; a letter's accent
    taken off (``prüft`` is ``pruft``, as the full-text index holds it, not ``pr`` and
    ``ft``; a letter with two marks the index keeps one of is not found)."""
    found = _TERM.findall(code_terms(without_accents(question)).lower())
    return list(dict.fromkeys(term for term in found if len(term) > 1 and term not in STOPWORDS))


def without_accents(text: str) -> str:
    """``text`` with the marks on its letters taken off (``déploiement``: ``deploiement``)."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def named_symbols(question: str) -> set[str]:
    """Identifiers the question names: compound ones (``restartService``, ``default_jobs``)
    and any written as code (in backticks or followed by parentheses), as lookup keys."""
    found = {match for match in _COMPOUND.findall(question)}
    found |= set(_CODE_SPAN.findall(question)) | set(_CALLED.findall(question))
    return {symbol_key(name) for name in found if len(name) > 2}


# Text the question quotes: a message, an option, a literal. A quote opens after a space or
# a bracket and closes before one, so the apostrophe of "user's" opens nothing.
_QUOTED = re.compile(
    r"(?<![\w'\"`])(?:'([^'\n]{3,200}?)'|\"([^\"\n]{3,200}?)\"|`([^`\n]{3,200}?)`"
    r"|\u2018([^\u2019\n]{3,200}?)\u2019|\u201c([^\u201d\n]{3,200}?)\u201d)(?![\w'\"`])"
)


def quoted_literals(question: str) -> tuple[str, ...]:
    """The texts the question quotes (in quotes or backticks), each once, in order: what a
    line of the code may hold verbatim. Fewer than three characters quote nothing telling."""
    found: dict[str, None] = {}
    for groups in _QUOTED.findall(question):
        text = next(group for group in groups if group).strip()
        if len(text) >= 3:
            found[text] = None
    return tuple(found)


def named_routes(question: str) -> list[str]:
    """URL paths the question names (``/api/users``)."""
    return [route.rstrip(".,?") for route in ROUTE.findall(question)]


def named_variables(question: str) -> list[str]:
    """Environment-variable-shaped names the question names (``DATABASE_URL``)."""
    return ENVIRONMENT.findall(question)
