"""How well a symbol, route or environment variable matches a question: pure scores.

Scores follow the original service, with three departures for symbols. A symbol earns 20
for each question word among the words of its name, and a prose word matches in any
inflection (``registered`` is ``register``, ``blueprints`` is ``Blueprint``); a word written as
code (``select_sources``) matches only as written. It earns 100 when the question names it,
but a one-word name such as ``blueprints`` is named only when written as code: as a plain word
of a sentence it is one matching word (5 more when the question holds the whole name). A
method also earns 10 for each further question word in its class's name, so one word of the
name and one of its class (``Blueprint.register``) outrank a name that is one word of the
question. A route earns 100 when the question contains its path and 20 for each question
token among its method and path tokens. The questions over an index that use them are
``szrag.structure``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from szrag.base.text import stem, tokens

FULL_NAME = 100
NAME_TOKEN = 20
# A word of the definition's own name says more than a word of its class, and either says
# more than a name the question happens to cover whole: so one word of the name and one of
# its class outrank a name that is one word of the question, and two words of the name
# outrank one word of the name and one of its class.
CONTAINER_TOKEN = NAME_TOKEN // 2
WHOLE_NAME = NAME_TOKEN // 4
ROUTE_PATH = 100
ROUTE_TOKEN = 20

_ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")

# ---- scoring (pure) -----------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def name_tokens(name: str) -> frozenset[str]:
    """The tokens of a symbol name or route, computed once per distinct name."""
    return frozenset(tokens(name))


def names_in(question_lower: str, name: str) -> bool:
    """True when ``name`` occurs in the question as a whole word (``get`` not in ``target``)."""
    lowered = name.lower()
    return any(
        _apart(question_lower, at - 1) and _apart(question_lower, at + len(lowered))
        for at in _places(question_lower, lowered)
    )


def _places(text: str, part: str) -> Iterator[int]:
    """Where ``part`` begins in ``text``, each place (found with ``str.find``: a pattern
    made for each name was compiled for each, past what ``re`` keeps)."""
    at = text.find(part)
    while at >= 0:
        yield at
        at = text.find(part, at + 1)


def _apart(text: str, at: int) -> bool:
    """Whether the character at ``at`` (none before the text or past it) is not one a name
    runs on through: a word character (``\\w``) or ``$``."""
    if at < 0 or at >= len(text):
        return True
    character = text[at]
    return not (character.isalnum() or character in "_$")


def words_of_name(name: str) -> tuple[tuple[str, str], ...]:
    """Each token of a name with its stem (``register_blueprints``: register, blueprint),
    worked out each time: a question reads thousands of names once each (``SymbolQuestion``
    keeps what it found for each), and a process keeping them all would hold tens of MiB
    that its symbol table (``symbol_table.py``) already holds."""
    return tuple((token, stem(token)) for token in sorted(tokens(name)))


# a run of word characters: a name that is one may be named by the question's own runs
WORD_RUN = re.compile(r"[\w$]+")
WHOLE_NAME_MARK = "="  # before a whole lowercased name among a name's lookup words
OTHER_CHARACTERS = ""  # the lookup word of a name with characters other than word characters


@functools.lru_cache(maxsize=4096)  # the names of a few files at once: they repeat within one
def lookup_words(name: str) -> tuple[str, ...]:
    """The words a store finds a definition named ``name`` by, so that a question reads only
    the definitions its words reach: the name's tokens (a question key is one of them or the
    stem of one, and a stem begins with its word's letters but for a last ``y``), and its
    whole lowercased name after ``WHOLE_NAME_MARK`` when that is a run of word characters
    (the question may name it as one of its runs), else ``OTHER_CHARACTERS`` (always tried).
    """
    lowered = name.lower()
    whole = WHOLE_NAME_MARK + lowered if WORD_RUN.fullmatch(lowered) else OTHER_CHARACTERS
    return (*sorted(tokens(name)), whole)


def lookup_prefix(key: str) -> str:
    """What every token whose stem is ``key`` (or that is ``key``) begins with."""
    return key[:-1] if key.endswith("y") and len(key) > 1 else key


# A word of the question written as code: an identifier, a call, a path, a sigil, a number.
_CODE_WORD = re.compile(r"[_`#$/\\\d]|\(\)|\w\.\w|[a-z][A-Z]|::|->")


@dataclass(frozen=True, slots=True)
class SymbolQuestion:
    """A question as symbol scoring reads it: lowercased, the tokens of the words it writes as
    code (matched as written: ``select_sources`` is no ``source``), and the stems of its
    prose words (matched in any inflection: ``registered`` is ``register``)."""

    lowered: str
    exact: frozenset[str]
    stems: frozenset[str]
    keys: frozenset[str]  # both, to pass over the names that match no word at once
    # what each name gives this question: thousands of definitions share a few names
    _names: dict[str, tuple[int, frozenset[str]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _words: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, question: str) -> SymbolQuestion:
        """The question read once, for scoring every definition against it."""
        exact: set[str] = set()
        stems: set[str] = set()
        for word in question.split():
            if _CODE_WORD.search(word):
                exact |= tokens(word)
            else:
                stems |= {stem(token) for token in tokens(word)}
        return cls(question.lower(), frozenset(exact), frozenset(stems), frozenset(exact | stems))

    def name_score(
        self, name: str, held: AbstractSet[str] | None = None
    ) -> tuple[int, frozenset[str]]:
        """``symbol_score`` of ``name`` without its class, and the words it holds; worked out
        once per name for this question. ``held``: the name's tokens that may hold a word of
        the question, when known (``symbol_score``)."""
        found = self._names.get(name)
        if found is None:
            found = self._names[name] = (
                _name_score(self, name) if held is None else _held_name_score(self, name, held)
            )
        return found

    def class_words(self, container: str) -> frozenset[str]:
        """The question's words an enclosing class's name holds, worked out once per class."""
        found = self._words.get(container)
        if found is None:
            found = self._words[container] = self.words_in(container)[0]
        return found

    def words_in(self, name: str) -> tuple[frozenset[str], bool]:
        """The question's words that ``name`` holds (each once, however many of the name's
        tokens it matches), and whether they cover every token of the name."""
        return self.words_of(words_of_name(name))

    def words_of(self, words: tuple[tuple[str, str], ...]) -> tuple[frozenset[str], bool]:
        """``words_in`` of a name with these words (``words_of_name``)."""
        found: set[str] = set()
        whole = True
        for token, token_stem in words:
            if token in self.exact:
                found.add(token)
            elif token_stem in self.stems:
                found.add(token_stem)
            else:
                whole = False
        return frozenset(found), whole


def names_symbol(question_lower: str, name: str) -> bool:
    """True when the question names the definition itself: its whole name stands there as a
    word and could not be an ordinary word of the sentence, because it has several words
    (``register_blueprint``, ``createApp``) or characters no word has (``#flush``), or it is
    written as code (`` `blueprints` ``, ``blueprints()``, ``request.blueprints``)."""
    if not name or not names_in(question_lower, name):
        return False
    if len(name_tokens(name)) > 1 or not name.isalpha():
        return True
    lowered = name.lower()
    if f"`{lowered}`" in question_lower:
        return True
    for at in _places(question_lower, lowered):
        end = at + len(lowered)
        if question_lower.startswith("(", end) and _apart(question_lower, at - 1):
            return True  # called: ``name(``
        if at >= 2 and question_lower[at - 1] == "." and _apart(question_lower, end):
            owner = question_lower[at - 2]
            if owner.isalnum() or owner in "_)]":
                return True  # an attribute: ``request.name``, ``items().name``
    return False


def symbol_score(
    asked: SymbolQuestion,
    name: str,
    container: str | None = None,
    held: AbstractSet[str] | None = None,
) -> int:
    """20 per question word in the name; 100 when the question names the definition, else 5
    when its words cover the whole name; and, once the name matches, 10 per further question
    word in the enclosing class's name. ``held``: when known, the name's tokens that may hold
    a word of the question (those a store found it by); its other tokens are then counted,
    never stemmed."""
    score, own = asked.name_score(name, held)
    if container and own:
        score += CONTAINER_TOKEN * len(asked.class_words(container) - own)
    return score


def _held_name_score(
    asked: SymbolQuestion, name: str, held: AbstractSet[str]
) -> tuple[int, frozenset[str]]:
    """``_name_score`` of a name of whose tokens only ``held`` may hold a question word."""
    found: set[str] = set()
    holding = 0  # tokens holding a word: the name is whole when every one of its tokens does
    for token in held:
        if token in asked.exact:
            found.add(token)
        else:
            token_stem = stem(token)
            if token_stem not in asked.stems:
                continue
            found.add(token_stem)
        holding += 1
    own = frozenset(found)
    return _own_score(asked, name, own, bool(own) and holding == len(tokens(name)))


def _name_score(asked: SymbolQuestion, name: str) -> tuple[int, frozenset[str]]:
    """The name's own part of ``symbol_score``, and the question's words it holds (only a
    name holding some lets its class's words count)."""
    words = words_of_name(name)
    if asked.keys.isdisjoint(key for pair in words for key in pair):  # most: no word
        if name.lower() not in asked.lowered:  # and seldom named
            return 0, frozenset()
        return (FULL_NAME if names_symbol(asked.lowered, name) else 0), frozenset()
    return _own_score(asked, name, *asked.words_of(words))


def _own_score(
    asked: SymbolQuestion, name: str, own: frozenset[str], whole: bool
) -> tuple[int, frozenset[str]]:
    """The name's own score, given the question's words it holds and whether they cover
    every token of it, with those words."""
    named = names_symbol(asked.lowered, name)
    if not own:
        return (FULL_NAME if named else 0), own
    score = NAME_TOKEN * len(own)
    if named:
        score += FULL_NAME
    elif whole:
        score += WHOLE_NAME
    return score, own


def path_in(question_lower: str, path: str) -> bool:
    """True when a route path stands in the question on its own (``/`` not in ``and/or``)."""
    lowered = path.lower()
    if not path or lowered not in question_lower:
        return False
    return re.search(rf"(?<![\w/]){re.escape(lowered)}(?![\w/-])", question_lower) is not None


def route_score(question_lower: str, question_tokens: set[str], method: str, path: str) -> int:
    """100 for the route path in the question plus 20 per question token in method and path."""
    return scored_route(question_lower, question_tokens, path, name_tokens(f"{method} {path}"))


def scored_route(
    question_lower: str, question_tokens: AbstractSet[str], path: str, route_tokens: frozenset[str]
) -> int:
    exact = ROUTE_PATH if path_in(question_lower, path) else 0
    return exact + ROUTE_TOKEN * len(route_tokens & question_tokens)


def extract_environment_variables(question: str) -> list[str]:
    """Names in the question that look like environment variables, first-seen order."""
    return list(dict.fromkeys(_ENV_NAME.findall(question)))
