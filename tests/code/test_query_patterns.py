"""A query's patterns and the literals each needs: a file compiles only what it could match."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tree_sitter import Query

from szrag.code import analyse_source
from szrag.code.components import COMPONENT_EXTENSIONS
from szrag.code.languages import (
    EXTENSIONS,
    LANGUAGES,
    compile_whole_queries,
    forget_queries,
    grammar,
    parser,
    query,
    query_text,
    root_query,
)
from szrag.code.patterns import Pattern, split_patterns
from szrag.index import build_index, load_index

FIXTURES = Path(__file__).parent.parent / "fixtures" / "languages"


@pytest.fixture(autouse=True)
def fresh_queries() -> Iterator[None]:
    forget_queries()
    yield
    forget_queries()


def needs(pattern: str) -> list[set[str]]:
    (found,) = split_patterns(pattern)
    return [{literal.decode() for literal in group} for group in found.needs]


QUERY_FILES = [
    (language, files)
    for language, spec in sorted(LANGUAGES.items())
    for files in (spec.query_files, spec.root_query_files)
    if files
]


@pytest.mark.parametrize(("language", "files"), QUERY_FILES, ids=lambda item: str(item))
def test_the_split_agrees_with_the_compiler(language: str, files: tuple[str, ...]) -> None:
    text = "\n".join(query_text(file) for file in files)
    patterns = split_patterns(text)
    assert len(patterns) == Query(grammar(language), text).pattern_count
    for pattern in patterns:  # each is a whole pattern on its own
        assert Query(grammar(language), pattern.text).pattern_count == 1


def test_a_top_level_wildcard_or_string_is_a_pattern_of_its_own() -> None:
    text = '((identifier) @a (#eq? @a "zz"))\n_ @w\n"def" @keyword'
    patterns = split_patterns(text)
    assert [pattern.text for pattern in patterns] == [
        '((identifier) @a (#eq? @a "zz"))',
        "_ @w",
        '"def" @keyword',
    ]
    assert [len(pattern.needs) for pattern in patterns] == [1, 0, 0]
    assert Query(grammar("python"), text).pattern_count == 3


def test_equality_and_set_predicates_name_what_a_pattern_needs() -> None:
    assert needs('((identifier) @x (#eq? @x "environ"))') == [{"environ"}]
    assert needs('(call function: (identifier) @f (#any-of? @f "get" "post")) @c') == [
        {"get", "post"}
    ]
    both = '(attribute object: (identifier) @o (#eq? @o "os") attribute: (identifier) @a (#eq? @a "environ"))'
    assert needs(both) == [{"environ"}, {"os"}]  # the longest first: the rarest
    assert needs('((string) @s (#eq? @s "a\\"b\\\\"))') == [{'a"b\\'}]


def test_a_capture_a_match_may_leave_empty_needs_nothing() -> None:
    # a predicate over an empty capture holds whatever the literal
    assert needs('((call (identifier)? @f) @c (#eq? @f "getenv"))') == []
    assert needs('((module (comment)* @c) @m (#eq? @c "x"))') == []
    assert needs('((call [(identifier) @f (attribute)]) @c (#eq? @f "getenv"))') == []
    # in every branch of an alternation, the capture is always filled
    filled = '((call [(identifier) @f (attribute attribute: (identifier) @f)]) (#eq? @f "getenv"))'
    assert needs(filled) == [{"getenv"}]


def test_quantifiers_count_as_the_compiler_reads_them() -> None:
    # a quantifier after the capture still makes the node optional; one or more fills it
    assert needs('((call (identifier) @f ?) @c (#eq? @f "getenv"))') == []
    assert needs('((block (expression_statement)+ @s) (#eq? @s "x"))') == [{"x"}]


def test_a_predicate_inside_one_branch_needs_nothing() -> None:
    branch = '(call function: [((identifier) @f (#eq? @f "getenv")) (attribute)]) @c'
    assert needs(branch) == []


def test_empty_or_unknown_literals_need_nothing() -> None:
    assert needs('((identifier) @x (#eq? @x ""))') == []
    assert needs('((identifier) @x (#any-of? @x "" "env"))') == []
    assert needs('((identifier) @x (#eq? @x "\\q"))') == []  # an escape not read


def test_predicates_other_than_equality_to_literals_need_nothing() -> None:
    assert needs('((identifier) @x (#match? @x "^env$"))') == []
    assert needs('((identifier) @x (#not-eq? @x "env"))') == []
    assert needs("((pair key: (_) @a value: (_) @b) (#eq? @a @b))") == []
    assert needs("(function_definition name: (identifier) @name) @definition.function") == []


def test_a_pattern_is_possible_only_with_one_literal_of_each_group() -> None:
    pattern = Pattern("(x)", ((b"environ", b"getenv"), (b"os",)))

    def holding(*literals: bytes) -> Callable[[bytes], bool]:
        return lambda literal: literal in literals

    assert pattern.possible(holding(b"os", b"getenv"))
    assert not pattern.possible(holding(b"os"))
    assert not pattern.possible(holding(b"getenv"))
    assert Pattern("(x)").possible(holding())


def test_a_literal_counts_only_as_the_whole_text_of_a_node() -> None:
    # "environment" and "get_environ" hold "environ" as text, but no node is "environ"
    plain = b"def get_environ():\n    environment = 'prod'\n    return environment\n"
    reads = b"import os\nHOME = os.environ['HOME']\n"
    # os.environ[...], environ[...] and "..." in os.environ could match; no .get( nor getenv
    assert _partial_count(plain) + 3 == _partial_count(reads)


def _partial_count(source: bytes) -> int:
    forget_queries()
    tree = parser("python").parse(source)
    return query("python", source, tree.root_node).pattern_count


def _python(source: bytes) -> Query:
    return query("python", source, parser("python").parse(source).root_node)


def test_a_first_file_compiles_only_the_patterns_it_could_match() -> None:
    plain = b"def add(a, b):\n    return a + b\n"
    partial = _python(plain)
    whole_count = len(split_patterns(_python_query()))
    assert partial.pattern_count < whole_count
    # a file needing no more patterns shares it; one needing a pattern left out gets the
    # whole query, and so does every file after it
    assert _python(b"def other():\n    pass\n") is partial
    reads = _python(b"import os\nos.environ['HOME']\n")
    assert reads.pattern_count == whole_count
    assert _python(plain) is reads
    assert query("python") is reads


def test_a_worker_compiles_whole_queries() -> None:
    compile_whole_queries()
    assert _python(b"x = 1\n").pattern_count == len(split_patterns(_python_query()))


def _python_query() -> str:
    return "\n".join(query_text(file) for file in LANGUAGES["python"].query_files)


FIXTURE_SOURCES = sorted(
    path
    for path in FIXTURES.rglob("*")
    if path.is_file() and (path.suffix in EXTENSIONS or path.suffix in COMPONENT_EXTENSIONS)
)


@pytest.mark.parametrize("source", FIXTURE_SOURCES, ids=lambda path: path.name)
def test_a_file_gives_the_same_record_from_the_patterns_it_could_match(source: Path) -> None:
    relative = source.relative_to(FIXTURES).as_posix()
    text = source.read_text(encoding="utf-8")
    from_its_patterns = analyse_source(relative, text)  # the first file of a fresh process
    forget_queries()
    compile_whole_queries()
    assert analyse_source(relative, text) == from_its_patterns


def test_the_root_query_also_leaves_out_what_a_file_cannot_match() -> None:
    source = b"def add(a, b):\n    return a + b\n"  # no __all__
    tree = parser("python").parse(source)
    partial = root_query("python", source, tree.root_node)
    whole_count = len(
        split_patterns("\n".join(query_text(f) for f in LANGUAGES["python"].root_query_files))
    )
    assert partial is not None and partial.pattern_count < whole_count
    assert root_query("javascript", source, tree.root_node) is None  # it has none


def test_a_language_with_many_files_to_parse_compiles_its_whole_query() -> None:
    compile_whole_queries(["python"])
    source = b"x = 1\n"
    tree = parser("python").parse(source)
    assert query("python", source, tree.root_node).pattern_count == len(
        split_patterns(_python_query())
    )
    script = b"const x = 1;\n"
    js_tree = parser("javascript").parse(script)
    whole_js = "\n".join(query_text(f) for f in LANGUAGES["javascript"].query_files)
    assert query("javascript", script, js_tree.root_node).pattern_count < len(
        split_patterns(whole_js)
    )


def test_a_refresh_parsing_two_files_of_a_language_compiles_its_whole_query(
    tmp_path: Path,
) -> None:
    for name in ("a.py", "b.py", "c.js"):
        (tmp_path / name).write_text("x = 1\n", "utf-8")
    build_index(tmp_path).close()
    forget_queries()
    (tmp_path / "a.py").write_text("def a():\n    return 1\n", "utf-8")
    (tmp_path / "b.py").write_text("def b():\n    return 2\n", "utf-8")
    (tmp_path / "c.js").write_text("function c() { return 3 }\n", "utf-8")
    index = load_index(tmp_path)
    assert sorted(index.last_report.changed) == ["a.py", "b.py", "c.js"]
    index.close()
    # the two Python files compiled Python's whole query; the one JavaScript file its own
    source = b"x = 1\n"
    assert query("python", source, parser("python").parse(source).root_node).pattern_count == len(
        split_patterns(_python_query())
    )
    whole_js = "\n".join(query_text(f) for f in LANGUAGES["javascript"].query_files)
    script = b"function c() { return 3 }\n"
    tree = parser("javascript").parse(script)
    assert query("javascript", script, tree.root_node).pattern_count < len(split_patterns(whole_js))
