"""Symbols scored all at once from memory rank exactly as scoring them one by one does."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.base.public import to_public
from szrag.code.model import SymbolMatches
from szrag.code.scoring import (
    SymbolQuestion,
    symbol_score,
    words_of_name,
)
from szrag.code.symbol_table import Postings, SymbolTable
from szrag.index import Index, build_index, load_index, refresh_index
from szrag.structure.queries import find_symbols

CopyFixture = Callable[[str], Path]

TRICKY = """\
class CartStore:
    def check_cart(self):
        pass

    def check(self):
        pass

    def carts(self):
        pass


class Cart:
    def check(self):
        pass

    def store(self):
        pass


def _():
    pass


def check_cart():
    pass


def registered_blueprints():
    pass


class BlueprintSetupState:
    def register(self):
        pass

    def add_url_rule(self):
        pass
"""

TRICKY_JS = """\
const handlers = {
  'text/plain': function () {},
  'application/json; q=0.5': function () {},
};
class DeployQueue {
  #flush() {}
  drain = () => {};
  rollback() {}
}
function $select() {}
function verifyGithubSignature() {}
module.exports = { handlers, DeployQueue };
"""


def _questions(index: Index, count: int, seed: int) -> list[str]:
    """Questions made of the index's own names and their pieces, as prose and as code, with
    words no name holds; a few long enough to need several words of bits."""
    table = SymbolTable.of(index.definitions())
    pieces = [word for name in table.names for word in (name, *name.replace("_", " ").split())]
    pieces += ["the", "how", "does", "registered", "carts", "checks", "`carts`", "carts()"]
    pieces += ["request.blueprints", "#flush", "text/plain", "Cart.check", "nothing"]
    chooser = random.Random(seed)
    questions = [" ".join(chooser.sample(pieces, chooser.randint(1, 8))) for _ in range(count)]
    questions += [" ".join(chooser.sample(pieces, min(len(pieces), 90))) for _ in range(3)]
    return questions


def _both(index: Index, questions: list[str]) -> tuple[list[SymbolMatches], list[SymbolMatches]]:
    index.keep_in_memory(False)
    one_by_one = [find_symbols(question, index) for question in questions]
    index.keep_in_memory()
    at_once = [find_symbols(question, index) for question in questions]
    return one_by_one, at_once


@pytest.mark.parametrize("fixture", ["express_app", "python_app", "context_app_js", "languages"])
def test_scores_and_order_match_scoring_one_by_one(copy_fixture: CopyFixture, fixture: str) -> None:
    with build_index(copy_fixture(fixture)) as index:
        questions = _questions(index, 150, seed=len(fixture))
        one_by_one, at_once = _both(index, questions)
    assert at_once == one_by_one
    assert sum(map(len, at_once)) > 150  # the questions do match definitions


def test_tricky_names_classes_and_long_questions(tmp_path: Path) -> None:
    (tmp_path / "store.py").write_text(TRICKY)
    (tmp_path / "queue.js").write_text(TRICKY_JS)
    (tmp_path / "again.py").write_text(TRICKY)  # the same names in a second file: ties
    with build_index(tmp_path) as index:
        questions = _questions(index, 300, seed=7)
        questions += [
            "how are carts checked?",
            "what does `carts` return?",
            "when is Cart.check called?",
            "who calls check_cart?",
            "what does #flush do in the queue",
            "which handler takes text/plain",
            "the registered blueprints",
            "_",
            " ".join(f"word{number}" for number in range(70)) + " check cart store",
        ]
        one_by_one, at_once = _both(index, questions)
        assert at_once == one_by_one
        cart = find_symbols("when is Cart.check called?", index)
        assert cart[0].name == "check" and ("Cart", "check") in {
            (match.container, match.name) for match in cart if match.score == cart[0].score
        }
        assert cart[0].score == symbol_score(
            SymbolQuestion.of("when is Cart.check called?"), "check", "Cart"
        )
        flush = find_symbols("what does #flush do in the queue", index)
        assert flush[0].name == "#flush"
        long = find_symbols(questions[-1], index)
        assert long == one_by_one[-1] and long[0].name == "check_cart"


ODD_NAMES = (
    "#flush",
    "text/plain",
    "application/json; q=0.5",
    "valid?",
    "save!",
    "==",
    "[]",
    "+",
    "<=>",
    "$scope",
    "get$item",
    "a.b.c",
    "foo-bar",
    "x²-y",
    "Ünï-code",
    "__init__",
    "é.test",
    "operator==",
    "ns\\Klass",
    "-leading",
    "trailing-",
    "two  spaces",
    "日本-語",
    "K-elvin",
)


def test_names_with_other_characters_are_tried_by_their_first_run() -> None:
    # the table tries a name with other characters only when its first word run stands in
    # the question; every name the question names is still found
    from szrag.code.model import Definition
    from szrag.code.scoring import names_symbol

    chooser = random.Random(11)
    plain = ["check", "cart", "flush", "plain", "scope", "item", "init", "code", "y", "q"]
    names = [*ODD_NAMES, *plain]
    table = SymbolTable.of(
        (f"f{number % 3}.js", Definition(name, "function", number + 1, number + 2))
        for number, name in enumerate(names)
    )
    pieces = [*names, *(name.upper() for name in names), "the", "(", ")", ".", "`", "x", "-"]
    for _ in range(3000):
        question = chooser.choice(["", " "]).join(chooser.sample(pieces, chooser.randint(1, 6)))
        asked = SymbolQuestion.of(question)
        expected = {table.names.index(name) for name in names if names_symbol(asked.lowered, name)}
        assert table._named(asked) == expected, question


def test_the_table_follows_the_index(tmp_path: Path) -> None:
    (tmp_path / "store.py").write_text(TRICKY)
    with build_index(tmp_path) as index:
        index.keep_in_memory()
        assert not find_symbols("the audit trail", index)
    (tmp_path / "audit.py").write_text("def audit_trail():\n    pass\n")
    with load_index(tmp_path) as index:
        index.keep_in_memory()
        assert [match.name for match in find_symbols("the audit trail", index)] == ["audit_trail"]


def _columns(table: SymbolTable) -> dict[str, object]:
    """The table's fields as plain values to compare (arrays as lists)."""
    found: dict[str, object] = {}
    for name in SymbolTable.__dataclass_fields__:
        value = getattr(table, name)
        if isinstance(value, Postings):
            value = (value.order.tolist(), value.starts.tolist())
        elif hasattr(value, "tolist"):
            value = value.tolist()
        found[name] = value
    return found


def test_a_table_made_from_the_last_generations_is_the_table_made_afresh(
    tmp_path: Path,
) -> None:
    (tmp_path / "store.py").write_text(TRICKY)
    (tmp_path / "queue.js").write_text(TRICKY_JS)
    with build_index(tmp_path) as index:
        earlier = SymbolTable.of(index.definitions())
        assert earlier.name_words() == {name: words_of_name(name) for name in earlier.names}
        (tmp_path / "store.py").write_text(TRICKY.replace("check_cart", "verify_basket"))
        (tmp_path / "audit.py").write_text("class AuditTrail:\n    def record_entry(self): pass\n")
        refresh_index(index)
        later = SymbolTable.of(index.definitions(), earlier)
        assert _columns(later) == _columns(SymbolTable.of(index.definitions()))
        assert {"verify_basket", "record_entry"} <= set(later.names)
        assert "check_cart" not in later.names


def test_matches_read_from_memory_behave_as_a_list(tmp_path: Path) -> None:
    (tmp_path / "store.py").write_text(TRICKY)
    (tmp_path / "again.py").write_text(TRICKY)
    (tmp_path / "queue.js").write_text(TRICKY_JS)
    with build_index(tmp_path) as index:
        question = "how are carts checked in the store?"
        listed = list(find_symbols(question, index))
        index.keep_in_memory()
        lazy = find_symbols(question, index)
        assert type(lazy) is not SymbolMatches and len(lazy) == len(listed) > 4
        assert lazy[-1] == listed[-1] and lazy[1:3] == listed[1:3] and lazy[:100] == listed
        with pytest.raises(IndexError):
            lazy[len(listed)]
        assert lazy == listed and lazy == SymbolMatches(listed) and lazy != listed[1:]
        plain = SymbolMatches(listed)
        assert lazy.best_by_file() == plain.best_by_file()
        assert list(lazy.best_by_file()) == ["again.py", "store.py"]  # by their first match
        for path in ("store.py", "again.py", "queue.js", "missing.py"):
            assert lazy.of_file(path) == plain.of_file(path)
        assert lazy.of_file("store.py")[0].score == lazy.best_by_file()["store.py"]
        assert to_public(lazy) == to_public(listed) == [match.to_dict() for match in listed]
