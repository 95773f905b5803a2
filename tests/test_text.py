from __future__ import annotations

import random
import re

import pytest

from szrag.base.text import (
    LineRanges,
    create_chunks,
    extract_file_references,
    extract_line_references,
    file_type,
    heading_before,
    is_test_path,
    normalise_path,
    own_paths,
    path_suffixes,
    split_identifiers,
    split_lines,
    stem,
    token_text,
    tokens,
    tokens_by_line,
    words,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("getUserName", {"get", "user", "name"}),
        ("server/lib/rag.js", {"server", "lib", "rag", "js"}),
        ("snake_case-and.dots", {"snake", "case", "and", "dots"}),
        ("a b c", set()),
        ("How does X work? x2 x2", {"how", "does", "work", "x2"}),
        ("HTTPServer", {"httpserver"}),
        ("windows\\path\\file.md", {"windows", "path", "file", "md"}),
    ],
)
def test_tokens(value: str, expected: set[str]) -> None:
    assert tokens(value) == expected


@pytest.mark.parametrize(
    "inflections",
    [
        ("register", "registered", "registers", "registering"),
        ("blueprint", "blueprints"),
        ("parse", "parsed", "parses", "parsing"),
        ("map", "mapped", "mapping", "maps"),
        ("set", "settings", "setting"),
        ("entry", "entries"),
        ("apply", "applied", "applies"),
        ("class", "classes"),
        ("match", "matches", "matched"),
        ("add", "added", "adds"),
    ],
)
def test_stem_joins_inflections(inflections: tuple[str, ...]) -> None:
    assert len({stem(word) for word in inflections}) == 1


@pytest.mark.parametrize(
    "word", ["status", "analysis", "class", "string", "need", "use", "of", "v2", "router"]
)
def test_stem_leaves_words_without_an_inflection_whole(word: str) -> None:
    assert stem(word) == word


def test_a_derived_word_keeps_a_stem_of_its_own() -> None:
    assert stem("registration") != stem("register") and stem("router") != stem("route")


def test_words_are_distinct_lowercase_runs_in_order() -> None:
    assert words("verifyGithubSignature(secret, secret) x-hub") == [
        "verifygithubsignature",
        "secret",
        "x",
        "hub",
    ]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("a/b.js", "javascript"),
        ("a/b.MJS", "javascript"),
        ("x.ts", "typescript"),
        ("x.py", "python"),
        ("README.md", "markdown"),
        ("package.json", "json"),
        (".github/workflows/ci.yml", "yaml"),
        ("deploy.service", "config"),
        (".env.example", "config"),
        ("unknown.xyz", "text"),
    ],
)
def test_file_type(path: str, kind: str) -> None:
    assert file_type(path) == kind


def test_chunks_are_overlapping_sixty_line_windows_every_forty() -> None:
    content = "\n".join(f"line {number}" for number in range(1, 101))
    chunks = create_chunks(content, "a.js")
    assert [(chunk.start, chunk.end) for chunk in chunks] == [(1, 60), (41, 100), (81, 100)]
    assert chunks[0].text.splitlines()[0] == "line 1"
    assert chunks[1].text.splitlines()[-1] == "line 100"
    assert {chunk.type for chunk in chunks} == {"javascript"}
    assert all(chunk.heading is None for chunk in chunks)


def test_chunks_split_crlf_and_keep_a_trailing_empty_line() -> None:
    assert split_lines("a\r\nb\n") == ["a", "b", ""]
    assert split_lines("a\nb\n\n") == ["a", "b", "", ""]  # no CR: the quick split
    assert split_lines("a\rb\r\n\rc") == ["a\rb", "\rc"]  # a lone CR is no line break
    assert split_lines("") == [""]
    chunks = create_chunks("a\r\nb\n", "x.md")
    assert [(chunk.start, chunk.end, chunk.text) for chunk in chunks] == [(1, 3, "a\nb\n")]


def test_empty_file_gives_one_empty_chunk() -> None:
    assert [(c.start, c.end, c.text) for c in create_chunks("", "x.js")] == [(1, 1, "")]


def test_markdown_chunks_carry_the_nearest_heading_above_their_start() -> None:
    lines = ["# Title", *["text"] * 45, "## Second", *["more"] * 40]
    chunks = create_chunks("\n".join(lines), "doc.md")
    assert chunks[0].heading == "Title"
    assert chunks[1].heading == "Title"  # starts at line 41, before "## Second" on line 47
    assert chunks[2].heading == "Second"


def test_heading_ignores_deeply_indented_and_hashless_lines() -> None:
    assert heading_before(["    # code, not a heading", "text"], 1) is None
    assert heading_before(["   ### Three spaces ok  "], 0) == "Three spaces ok"


def test_chunk_parameters_must_be_positive() -> None:
    with pytest.raises(ValueError):
        create_chunks("x", "a.md", chunk_step=0)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("`./Server/Rag.js`", "server/rag.js"),
        ('"docs\\ARCH.md",', "docs/arch.md"),
        ("(package.json).", "package.json"),
    ],
)
def test_normalise_path(raw: str, normal: str) -> None:
    assert normalise_path(raw) == normal


def test_extract_line_references_reads_traces_editors_and_links() -> None:
    found = extract_line_references(
        'File "/usr/lib/python3.11/site-packages/pkg/client.py", line 1010, in send\n'
        "    at handle (/srv/app/server/webhook.js:20:5) and webhook.js:7\n"
        "https://github.com/acme/app/blob/main/app.py#L33-L40 and app.py alone",
        frozenset({".py", ".js"}),
    )
    assert found == [
        ("usr/lib/python3.11/site-packages/pkg/client.py", 1010),
        ("srv/app/server/webhook.js", 20),
        ("webhook.js", 7),
        ("github.com/acme/app/blob/main/app.py", 33),
    ]


def test_path_suffixes_are_the_tails_a_trace_may_name() -> None:
    assert path_suffixes("srv/app/server/webhook.js") == [
        "srv/app/server/webhook.js",
        "app/server/webhook.js",
        "server/webhook.js",
    ]  # a file name alone, deep in a trace, is some dependency's
    assert path_suffixes("app/main.py") == ["app/main.py", "main.py"]
    assert path_suffixes("main.py") == ["main.py"]
    assert path_suffixes("github.com/acme/app/blob/main/app.py")[0] == "app.py"
    assert path_suffixes("gitlab.com/acme/app/-/blob/main/lib/app.py")[0] == "lib/app.py"
    # a folder named like a link's is a folder: the path itself first, no file name alone
    assert path_suffixes("src/tree/node/index.js") == [
        "src/tree/node/index.js",
        "tree/node/index.js",
        "node/index.js",
    ]


def test_a_traces_dependency_frames_give_way_to_its_own() -> None:
    frames = ["app/node_modules/express/lib/utils.js", "app/lib/server.js"]
    assert own_paths(frames) == ["app/lib/server.js"]
    # a question about an installed package's own code keeps its frames
    assert own_paths(["usr/lib/site-packages/httpx/_client.py"]) == [
        "usr/lib/site-packages/httpx/_client.py"
    ]


def test_extract_file_references_prefers_the_longest_extension() -> None:
    found = extract_file_references(
        "Compare ./server/webhook.js with package.json and docs\\Security.md, then server/webhook.js",
        frozenset({".js", ".json", ".md"}),
    )
    assert found == ["server/webhook.js", "package.json", "docs/security.md"]
    assert extract_file_references("no files here", frozenset({".js"})) == []


def test_line_ranges_overlap_as_testing_each_range() -> None:
    chooser = random.Random(5)
    for _ in range(400):
        ranges = [
            (first, first + chooser.randint(-3, 30))  # inverted ranges too
            for first in (chooser.randint(1, 200) for _ in range(chooser.randint(0, 12)))
        ]
        merged = LineRanges(ranges)
        for start in range(-2, 240, 3):
            for end in (start - 1, start, start + 5, start + 59):
                expected = any(start <= last and end >= first for first, last in ranges)
                assert merged.overlap(start, end) is expected, (ranges, start, end)


def test_line_ranges_join_touching_and_nested_ranges() -> None:
    ranges = LineRanges([(10, 20), (21, 30), (12, 14), (40, 40)])
    assert ranges.overlap(25, 26) and ranges.overlap(1, 10) and ranges.overlap(40, 45)
    assert not ranges.overlap(31, 39) and not ranges.overlap(41, 90)
    assert not LineRanges([]).overlap(1, 100)
    assert LineRanges(iter([(10, 20), (30, 25)])).overlap(15, 15)  # any iterable, read once


def test_tokens_by_line_are_each_lines_tokens() -> None:
    text = "const fooBar = 1;\nİstanbul ẞtraße getURL\n\n  x\r\nsnake_case99 camelCaseWord\nend"
    assert tokens_by_line(text) == [tokens(line) for line in text.split("\n")]
    assert tokens_by_line("") == [set()]


# The definitions the fast paths must agree with: patterns over the whole text.
_DEFINED_CAMEL = re.compile(r"([a-z])([A-Z])")
_DEFINED_TOKEN = re.compile(r"[a-z0-9]{2,}")
_DEFINED_WORD = re.compile(r"[a-z0-9]+")
_DEFINED_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_DEFINED_ACRONYM = re.compile(r"([A-Z])([A-Z][a-z])")
# letters that lowercase into ASCII (the Kelvin sign, a dotted capital I), a final sigma,
# spaces that are not ASCII, a lone surrogate, ligatures and title case, beside ASCII
_AWKWARD = "aZbY09AB cd_-.'\n\r\t\x1c\u212a\u0130\u03a3\u03c3\u00a0\u2028\u0085\u00e9\u00c9\u1e9e\u00df\ufb00\u0149\u01c5\ud800"


def _awkward_texts() -> list[str]:
    rng = random.Random(20261202)
    samples = ["", "getHTTPServerURL", "XMLHttpRequest_v2", "\u212aelvin \u0130stanbul ÆON"]
    samples += [
        "".join(rng.choice(_AWKWARD) for _ in range(rng.randint(0, 24))) for _ in range(3000)
    ]
    return samples


def test_tokens_are_the_camel_split_lowercase_runs_of_two_or_more() -> None:
    for value in _awkward_texts():
        spaced = _DEFINED_CAMEL.sub(r"\1 \2", value).lower()
        assert tokens(value) == set(_DEFINED_TOKEN.findall(spaced)), repr(value)
        assert tokens_by_line(value) == [
            set(_DEFINED_TOKEN.findall(line)) for line in spaced.split("\n")
        ], repr(value)


def test_words_are_the_runs_of_the_lowercased_text() -> None:
    for value in _awkward_texts():
        expected = list(dict.fromkeys(_DEFINED_WORD.findall(value.lower())))
        assert words(value) == expected, repr(value)
    assert words("\u212a8s \u0130D") == ["k8s", "i", "d"]  # lowercased before it is cut


def test_split_identifiers_spaces_each_word_of_an_identifier() -> None:
    assert split_identifiers("getHTTPServerURL my_var2Name\nXMLHttp") == (
        "get HTTP Server URL my var2 Name\nXML Http"
    )
    for value in _awkward_texts():
        spaced = _DEFINED_LOWER_UPPER.sub(r"\1 \2", value)
        assert split_identifiers(value) == _DEFINED_ACRONYM.sub(r"\1 \2", spaced).replace(
            "_", " "
        ), repr(value)


def test_the_token_text_spaces_every_camel_case_boundary_as_the_pattern_does() -> None:
    # a space before each capital after a lowercase ASCII letter, then lowercased: short
    # texts go through the pattern, long ones through their bytes, with the same result
    boundary = re.compile(r"(?<=[a-z])(?=[A-Z])")
    chooser = random.Random(11)
    alphabet = "aAzZbQ09 _-\n\t.\u0130\u212a\u00b5\u00e9\u4e2d\ud800\U0001f600"
    for _ in range(400):
        length = chooser.choice([chooser.randrange(40), chooser.randrange(900, 3000)])
        value = "".join(chooser.choice(alphabet) for _ in range(length))
        if chooser.random() < 0.5:
            value = "".join(char for char in value if char.isascii())
        expected = boundary.sub(" ", value).lower()
        assert token_text(value) == expected


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_app.py", True),
        ("src/app.test.ts", True),
        ("cmd/root_test.go", True),
        ("src/test/java/shop/Cart.java", True),
        # a Gradle source set, a .NET test project, a JUnit, Kotlin, NUnit or PHPUnit class
        ("okhttp/src/jvmTest/kotlin/okhttp3/CacheTest.kt", True),
        ("app/src/androidTest/java/shop/Login.java", True),
        ("src/Polly.Core.Tests/Retry/Options.cs", True),
        ("Shop/OrderTests.cs", True),
        ("lib/PaymentIT.java", True),
        ("src/PaymentTest.php", True),
        ("Tests/AlamofireTests/SessionTests.swift", True),
        ("MyAppTests/Helpers/MockSession.swift", True),
        ("MyAppUITests/Flows.swift", True),
        # code whose name only ends in those letters, or a feature folder in capitals
        ("src/main/java/shop/Latest.java", False),
        ("src/main/kotlin/Contest.kt", False),
        ("src/ABTest/variant.py", False),
        ("src/features/abTest/variant.ts", False),
        ("Sources/SpeedTest/Client.swift", False),
        ("tools/LoadTest/Main.cs", False),
        ("junit-jupiter-params/src/main/java/org/junit/ParameterizedTest.java", False),
        ("Sources/XCTestExtras/AsyncTest.swift", False),
        ("src/Polly/Policy.cs", False),
    ],
)
def test_tests_are_known_by_their_folder_or_class_name(path: str, test: bool) -> None:
    assert is_test_path(path) is test
