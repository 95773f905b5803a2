"""The definitions each language declares beyond functions and classes, and the types that
own them: TypeScript's interfaces, type aliases, enums, namespaces and signatures, a module's
anonymous default export, a named function handed to a call, every named Go type and the
receiver a Go method belongs to, the type or trait a Rust function is implemented for, and
the interfaces and enums whose methods Java, C# and PHP declare."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from szrag.code import analyse_source
from szrag.code.model import CodeRecord
from szrag.code.rereading import REREADINGS
from szrag.code.units import file_units
from szrag.index import build_index
from szrag.structure.queries import find_symbols

LANGUAGE_FIXTURES = Path(__file__).parent.parent / "fixtures" / "languages"


def _definitions(relative: str) -> list[tuple[str, str, str | None]]:
    source = LANGUAGE_FIXTURES / relative
    record = analyse_source(relative, source.read_text(encoding="utf-8"))
    assert record is not None and not record["partial"]
    return [(item["name"], item["kind"], item["container"]) for item in record["functions"]]


def test_typescript_declares_types_namespaces_signatures_and_a_default_export() -> None:
    assert _definitions("typescript/declarations.ts") == [
        ("DeployRequest", "interface", None),
        ("DeployState", "type", None),
        ("Priority", "type", None),
        ("Webhooks", "type", None),
        ("verify", "function", None),
        ("emit", "function", None),  # declare function
        ("parse", "function", None),  # its overloads' signatures read as part of it
        ("Runner", "class", None),
        ("run", "method", "Runner"),  # abstract
        ("declarations", "function", None),  # export default async function (...)
    ]


def test_javascript_names_default_exports_and_named_functions_handed_to_calls() -> None:
    from szrag.code.extract import module_name

    assert module_name("src/middleware/csrf/index.ts") == "csrf"
    assert module_name("vite.config.ts") == "vite"
    # the anonymous setTimeout callback stays a statement of the module
    assert _definitions("javascript/anonymous.js") == [
        ("defineGetter", "function", None),
        ("protocol", "function", None),
        ("anonymous", "class", None),  # export default class { ... }, named for its module
        ("start", "method", "anonymous"),
        ("secure", "function", None),
    ]


def test_go_methods_belong_to_their_receivers_and_every_named_type_is_one() -> None:
    assert _definitions("go/types.go") == [
        ("HandlerFunc", "type", None),
        ("Status", "type", None),
        ("Code", "type", None),  # an alias
        ("Set", "type", None),
        ("Command", "type", None),
        ("Execute", "method", "Command"),  # a pointer receiver
        ("Name", "method", "Command"),  # a value receiver
        ("Has", "method", "Set"),  # a generic receiver
        ("NewCommand", "function", None),
    ]


def test_rust_functions_belong_to_the_type_or_trait_they_are_implemented_for() -> None:
    assert _definitions("rust/impls.rs") == [
        ("Printer", "trait", None),
        ("print_header", "method", "Printer"),
        ("print_footer", "method", "Printer"),
        ("InteractivePrinter", "type", None),
        ("print_header", "method", "InteractivePrinter"),  # impl<'a> Printer for ...<'a>
        ("new", "method", "InteractivePrinter"),
        ("Result", "type", None),
        ("Bits", "type", None),  # a union
        ("bail", "macro", None),
        ("width", "function", None),
    ]


def test_interface_and_enum_methods_belong_to_their_type() -> None:
    assert _definitions("java/Shapes.java") == [
        ("Shape", "interface", None),
        ("area", "method", "Shape"),
        ("describe", "method", "Shape"),
        ("Unit", "type", None),
        ("toMetres", "method", "Unit"),
        ("Circle", "class", None),
        ("area", "method", "Circle"),
    ]
    assert _definitions("php/enums.php") == [
        ("Status", "type", None),
        ("label", "method", "Status"),
        ("Invoice", "interface", None),
        ("total", "method", "Invoice"),
    ]
    assert ("Save", "method", "IRepo") in _definitions("csharp/ItemsController.cs")


def test_kotlin_members_belong_to_their_class_object_or_interface() -> None:
    # a companion object's functions are called on the class (Cache.key), an enum's and an
    # object's on the type, an extension function on the type it extends (Cost.discounted)
    assert _definitions("kotlin/Cache.kt") == [
        ("Cache", "class", None),
        ("get", "method", "Cache"),
        ("evict", "method", "Cache"),
        ("close", "method", "Cache"),
        ("key", "method", "Cache"),
        ("Entry", "class", "Cache"),
        ("write", "method", "Entry"),
        ("Store", "interface", None),
        ("open", "method", "Store"),
        ("Tier", "class", None),
        ("label", "method", "Tier"),
        ("Registry", "type", None),
        ("find", "method", "Registry"),
        ("discounted", "method", "Cost"),
        ("Loader", "type", None),
    ]


def test_kotlin_symbols_imports_and_units(tmp_path: Path) -> None:
    from szrag.code.resolve import resolve_edges

    shutil.copy(LANGUAGE_FIXTURES / "kotlin/Cache.kt", tmp_path / "Cache.kt")
    with build_index(tmp_path) as index:
        key = find_symbols("how is a cache key made? Cache.key", index)
        assert (key[0].container, key[0].name, key[0].file) == ("Cache", "key", "Cache.kt")
    record = analyse_source("src/main/kotlin/shop/cache/Cache.kt", "import shop.model.Item\n")
    assert record is not None
    known = frozenset({"src/main/kotlin/shop/cache/Cache.kt", "src/main/kotlin/shop/model/Item.kt"})
    assert resolve_edges("src/main/kotlin/shop/cache/Cache.kt", record, known) == [
        ("src/main/kotlin/shop/model/Item.kt", "import")
    ]
    # a class of the project's Java, as an Android project mixes them
    mixed = frozenset({"src/main/kotlin/shop/cache/Cache.kt", "src/main/java/shop/model/Item.java"})
    assert resolve_edges("src/main/kotlin/shop/cache/Cache.kt", record, mixed) == [
        ("src/main/java/shop/model/Item.java", "import")
    ]
    reads = analyse_source(
        "Env.kt",
        'fun env() {\n  val a = java.lang.System.getenv("PATH")\n'
        '  val b = config.System.x.getenv("NOT_READ")\n}\n',
    )
    assert reads is not None
    assert [item["name"] for item in reads["environment_variables"]] == ["PATH"]
    # a class that fits a screen is one unit, with the doc comment above it
    assert _units("kotlin/Cache.kt")[:3] == [
        (1, 5, "module", None),
        (7, 40, "class", "Cache"),
        (42, 44, "interface", "Store"),
    ]


def test_swift_members_belong_to_their_type_and_an_extension_to_the_type_it_extends() -> None:
    assert _definitions("swift/Cache.swift") == [
        ("Cache", "class", None),
        ("init", "method", "Cache"),
        ("get", "method", "Cache"),
        ("key", "method", "Cache"),
        ("Entry", "class", "Cache"),
        ("write", "method", "Entry"),
        ("Store", "interface", None),
        ("open", "method", "Store"),
        ("Point", "type", None),
        ("moved", "method", "Point"),
        ("Tier", "type", None),
        ("label", "method", "Tier"),
        ("clear", "method", "Cache"),  # declared in `extension Cache`
        ("Counter", "class", None),
        ("increment", "method", "Counter"),
        ("main", "function", None),
        ("Loader", "type", None),
    ]


def _units(relative: str) -> list[tuple[int, int, str, str | None]]:
    text = (LANGUAGE_FIXTURES / relative).read_text(encoding="utf-8")
    record = analyse_source(relative, text)
    assert record is not None
    functions = CodeRecord.from_dict(record).unit_definitions
    return [
        (unit.start, unit.end, unit.kind, unit.name)
        for unit in file_units(text.splitlines(), functions, prose=False)
    ]


def test_units_follow_the_declarations_and_name_their_owners() -> None:
    typescript = _units("typescript/declarations.ts")
    assert (1, 6, "interface", "DeployRequest") in typescript  # with the comment above it
    assert (10, 13, "type", "Priority") in typescript
    assert (33, 36, "function", "declarations") in typescript
    assert (23, 27, "function", "parse") in typescript  # with its overloads
    assert not [unit for unit in typescript if unit[2] in ("module", "window") and unit[0] > 1]
    go = _units("go/types.go")
    assert (18, 20, "method", "Command.Execute") in go
    assert (26, 29, "method", "Set.Has") in go
    rust = _units("rust/impls.rs")
    assert (14, 18, "method", "InteractivePrinter.print_header") in rust  # with its impl line
    assert (20, 24, "method", "InteractivePrinter.new") in rust


def test_symbols_find_types_and_methods_by_their_owner(tmp_path: Path) -> None:
    for relative in ("typescript/declarations.ts", "go/types.go", "rust/impls.rs"):
        shutil.copy(LANGUAGE_FIXTURES / relative, tmp_path / Path(relative).name)
    with build_index(tmp_path) as index:
        interface = find_symbols("what fields does a DeployRequest carry?", index)
        assert (interface[0].name, interface[0].kind) == ("DeployRequest", "interface")
        execute = find_symbols("how does Command.Execute run?", index)
        assert (execute[0].container, execute[0].name) == ("Command", "Execute")
        header = find_symbols("InteractivePrinter print_header", index)
        assert (header[0].container, header[0].name, header[0].file) == (
            "InteractivePrinter",
            "print_header",
            "impls.rs",
        )


def _callbacks(relative: str) -> list[tuple[str, int, int]]:
    source = LANGUAGE_FIXTURES / relative
    record = analyse_source(relative, source.read_text(encoding="utf-8"))
    assert record is not None
    return [(item["name"], item["line"], item["end_line"]) for item in record["callbacks"]]


def test_functions_handed_to_calls_that_name_them_are_callbacks() -> None:
    # a route's handler, an event's listener (a template's text as written), tests by their
    # descriptions (a long one cut); the unnamed setTimeout callback is no callback
    assert _callbacks("javascript/callbacks.js") == [
        ('app.post("/api/report")', 5, 12),
        ('socket.on("auth:${kind}")', 14, 16),
        ('describe("reports")', 18, 27),
        ('it("rejects a report without a title")', 19, 22),
        (
            'it("keeps a report that has a title and a description long enough to need'
            ' cutting...")',
            24,
            26,
        ),
    ]
    assert _callbacks("go/handlers_test.go") == [
        ('t.Run("answers ok")', 9, 11),
        ('t.Run("rejects a POST")', 12, 14),
        ('http.HandleFunc("/healthz")', 18, 20),
    ]
    assert _callbacks("ruby/report_spec.rb") == [
        ('describe("reports")', 3, 11),
        ('it("rejects a report without a title")', 4, 6),
        ('it("keeps a titled report")', 8, 10),
    ]
    # they are not symbols: the definitions are what they were
    assert _definitions("javascript/callbacks.js") == []
    assert _definitions("go/handlers_test.go") == [
        ("TestHealth", "function", None),
        ("routes", "function", None),
    ]


def test_units_follow_the_callbacks() -> None:
    # a describe that fits a screen is one unit, its tests with it (the lines after it too)
    assert _units("javascript/callbacks.js") == [
        (1, 3, "module", None),
        (5, 12, "callback", 'app.post("/api/report")'),
        (14, 16, "callback", 'socket.on("auth:${kind}")'),
        (18, 29, "callback", 'describe("reports")'),
    ]
    # a longer one is cut at its tests
    lines = (LANGUAGE_FIXTURES / "javascript/callbacks.js").read_text(encoding="utf-8")
    padding = "\n".join(f"    expect({number}).toBe({number})" for number in range(30))
    longer = lines.replace(
        "  it('rejects", "  it('counts', () => {\n" + padding + "\n  })\n\n  it('rejects"
    )
    record = analyse_source("long.test.js", longer)
    assert record is not None
    cut = file_units(longer.splitlines(), CodeRecord.from_dict(record).unit_definitions, False)
    names = [unit.name for unit in cut if unit.kind == "callback"]
    assert names.index('it("counts")') < names.index('it("rejects a report without a title")')
    # the describe's first line joins its first test: no line of it stands alone
    counts = next(unit for unit in cut if unit.name == 'it("counts")')
    assert counts.start == 18 and 'describe("reports")' not in names


def _cut(path: str, text: str) -> list[tuple[int, int, str, str | None]]:
    record = analyse_source(path, text)
    assert record is not None
    functions = CodeRecord.from_dict(record).unit_definitions
    return [
        (unit.start, unit.end, unit.kind, unit.name)
        for unit in file_units(text.splitlines(), functions, False)
    ]


def test_callbacks_inside_functions_and_beside_named_functions() -> None:
    # a named function handed over keeps its own name for the unit
    named = "app.use('/x', function errorHandler(err, req, res, next) {\n  next(err)\n})\n"
    assert _cut("a.js", named) == [(1, 3, "function", "errorHandler")]
    # Go's routes handed their handlers inside a long main: each handler a unit
    handlers = "\n".join(
        f'\tmux.HandleFunc("/a{n}", func(w http.ResponseWriter, r *http.Request) {{\n'
        "\t\tw.WriteHeader(200)\n\t})"
        for n in range(15)
    )
    main = f"package main\n\nfunc main() {{\n\tmux := http.NewServeMux()\n{handlers}\n}}\n"
    units = _cut("main.go", main)
    # the package line and main's first lines join the first handler
    assert units[0] == (1, 7, "callback", 'mux.HandleFunc("/a0")')
    assert [unit[3] for unit in units[1:3]] == ['mux.HandleFunc("/a1")', 'mux.HandleFunc("/a2")']
    # a small helper inside a long handler is one of its statements, not a unit apart
    body = "\n".join(f"  total += {n}" for n in range(45))
    handler = (
        "app.post('/api/report', async (req, res) => {\n"
        f"  const check = (x) => {{\n    return x\n  }}\n{body}\n}})\n"
    )
    assert [unit[2] for unit in _cut("a.js", handler)] == ["callback", "part"]
    # a callee written over lines is named as one, from the line it ends on
    chained = 'app\n  .post("/chain", (req, res) => {\n    res.end()\n  })\n'
    record = analyse_source("a.js", chained)
    assert record is not None
    assert [(item["name"], item["line"]) for item in record["callbacks"]] == [
        ('app.post("/chain")', 2)
    ]


def test_callbacks_are_units_and_callers_but_not_symbols(tmp_path: Path) -> None:
    from szrag.rank.retrieve import retrieve
    from szrag.structure.queries import find_references

    shutil.copy(LANGUAGE_FIXTURES / "javascript/callbacks.js", tmp_path / "server.js")
    with build_index(tmp_path) as index:
        assert not [
            match
            for match in find_symbols("rejects a report without a title", index)
            if match.name.startswith("it(")
        ]
        callers = {item.caller for item in find_references("saveReport", index)}
        assert callers == {
            'app.post("/api/report")',
            'it("keeps a report that has a title'
            ' and a description long enough to need cutting...")',
        }
        sources = retrieve("why is POST /api/report failing?", 3, index=index)
        assert (sources[0].start, sources[0].end) == (5, 12)


def test_c_and_cpp_declare_their_functions_types_and_owners() -> None:
    assert _definitions("c/store.c") == [
        ("CHECK", "macro", None),  # a #define that takes arguments
        ("data_dir", "function", None),  # static const char *data_dir(void)
        ("store_open", "function", None),
        ("store_close", "function", None),
    ]
    assert _definitions("c/store.h") == [  # prototypes declare, they do not define
        ("store", "type", None),
        ("store_t", "type", None),
        ("store_mode", "type", None),
    ]
    assert _definitions("cpp/cart.hpp") == [
        ("shop", "type", None),
        ("Item", "type", None),
        ("Cart", "class", None),
        ("add", "method", "Cart"),
        ("Carts", "type", None),
    ]
    # defined outside their class: Cart::Cart, Cart::~Cart, int Cart::total() const
    assert _definitions("cpp/cart.cpp") == [
        ("shop", "type", None),
        ("Cart", "method", "Cart"),
        ("~Cart", "method", "Cart"),
        ("total", "method", "Cart"),
        ("largest", "function", None),
    ]
    source = (LANGUAGE_FIXTURES / "cpp/cart.cpp").read_text(encoding="utf-8")
    record = analyse_source("cpp/cart.cpp", source)
    assert record is not None
    largest = next(item for item in record["functions"] if item["name"] == "largest")
    assert (largest["line"], largest["end_line"]) == (19, 22)  # from its template <...> line


def test_a_header_is_cpp_only_when_it_holds_cpp() -> None:
    from szrag.code.languages import language_of_source

    c_header = '#ifdef __cplusplus\nextern "C" {\n#endif\nint new_store(int class);\n'
    assert language_of_source("include/store.h", c_header) == "c"
    assert language_of_source("include/cart.h", "namespace shop {\nclass Cart;\n}\n") == "cpp"
    assert language_of_source("src/cart.hpp", "int x;\n") == "cpp"
    record = analyse_source("src/legacy.c", "int main(void) { int new = 1, class = 2; }\n")
    assert record is not None and not record["partial"]  # C may name a variable new


def test_includes_resolve_beside_the_file_then_by_their_path() -> None:
    from szrag.code.resolve import resolve_edges

    record = analyse_source("src/main.c", '#include "store/db.h"\n#include <stdio.h>\n')
    assert record is not None
    assert [item["source"] for item in record["imports"]] == ["store/db.h"]
    beside = frozenset({"src/main.c", "src/store/db.h", "include/store/db.h"})
    assert resolve_edges("src/main.c", record, beside) == [("src/store/db.h", "import")]
    included = frozenset({"src/main.c", "include/store/db.h", "vendor/other/db.h"})
    assert resolve_edges("src/main.c", record, included) == [("include/store/db.h", "import")]
    assert resolve_edges("src/main.c", record, frozenset({"src/main.c"})) == []


def test_cpp_operators_specialisations_and_template_owners() -> None:
    source = """\
struct A {
    explicit operator bool() const { return true; }
    template <typename U> void convert(U value) {}
};
A::operator bool() const { return true; }
template <> int largest<int>(int a, int b) { return a; }
template <typename T> void Box<T>::put(T value) {}
std::ostream& operator<<(std::ostream& out, const A& a) { return out; }
A& A::operator=(A&& other) { return *this; }
namespace shop::cart { void clear() {} }
Matcher<const std::string&>::Matcher(int x) {}
"""
    record = analyse_source("shapes.cpp", source)
    assert record is not None
    assert [(item["name"], item["container"]) for item in record["functions"]] == [
        ("A", None),
        ("operator bool", "A"),
        ("convert", "A"),  # a member template is still its class's
        ("operator bool", "A"),
        ("largest", None),
        ("put", "Box"),  # not Box<T>
        ("operator<<", None),
        ("operator=", "A"),
        ("shop::cart", None),
        ("clear", None),
        ("Matcher", "Matcher"),  # the scope's own name, not a piece of its arguments
    ]
    from szrag.code.languages import language_of_source

    cpp_header = "#include <string>\nstruct Cart { int total() const { return 1; } };\n"
    assert language_of_source("cart.h", cpp_header) == "cpp"
    assert language_of_source("net.h", "/* [::1]:8080 */\nint listen_on(int port);\n") == "c"


def test_includes_that_name_no_repository_file_resolve_to_none() -> None:
    from szrag.code.resolve import resolve_edges

    written = ("/usr/include/x.h", "../x.h", "core.h")
    record = {
        "language": "c",
        "imports": [{"source": item, "line": 1, "names": [], "kind": "path"} for item in written],
    }
    known = frozenset({"lib/x.h", "src/core.h", "include/fmt/core.h", "src/a/b.c"})
    # an absolute path and a missing ../ are no repository file; of two core.h, the nearer
    assert resolve_edges("src/a/b.c", record, known) == [("src/core.h", "import")]


def test_a_block_opening_line_joins_the_next_unit_and_no_line_is_left_out() -> None:
    body = "\n".join(f"        let x{number} = {number};" for number in range(37))
    source = f"impl A {{\n    fn a(&self) {{\n{body}\n    }}\n}}\n\nimpl B for A {{\n    fn b(&self) {{}}\n}}\n"
    units = _cut("x.rs", source)
    assert units[-1] == (43, 45, "method", "A.b")  # impl B for A { opens it
    covered = {line for start, end, _, _ in units for line in range(start, end + 1)}
    lines = source.splitlines()
    assert [
        number for number, text in enumerate(lines, 1) if text.strip() and number not in covered
    ] == []


def test_refs_shows_a_callback_named_like_markup_and_redacts_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from szrag.cli import main

    (tmp_path / "routes.test.js").write_text(
        'describe("[/api] routes", () => {\n  helper()\n  helper()\n})\n'
        'it("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 is refused", () => {\n'
        "  helper()\n  check()\n})\n",
        encoding="utf-8",
    )
    shown = CliRunner().invoke(main, ["refs", "helper", "--root", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert "[/api] routes" in shown.output
    listed = CliRunner().invoke(main, ["refs", "helper", "--root", str(tmp_path), "--json"])
    callers = {row["caller"] for row in json.loads(listed.output)}
    assert 'describe("[/api] routes")' in callers
    token = next(caller for caller in callers if caller.startswith('it("token '))
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in token


HEADER_BEFORE_PREPROCESSING = """\
#ifndef SHOP_FORMAT_H_
#define SHOP_FORMAT_H_

#if SHOP_HAS_INCLUDE(<string_view>) && \\
    (SHOP_CPLUSPLUS >= 201703L)
#  define SHOP_USE_STRING_VIEW
#endif

namespace shop {

struct size_padding {
  unsigned size;
  unsigned padding;

  SHOP_CONSTEXPR size_padding(int digits, unsigned prefix)
      : size(prefix + digits), padding(0) {
    if (digits > 3) {
      padding = 1;
    }
  }
};

template <typename Char>
SHOP_CONSTEXPR SHOP_INLINE auto write_int(Char* out, int value) -> Char* {
  auto sp = size_padding(value, 0);
  return out + sp.size;
}

class SHOP_API format_error {
 public:
  int code() const { return 1; }
};

}  // namespace shop

#endif  // SHOP_FORMAT_H_
"""


def test_cpp_read_past_directives_and_macros_the_grammar_cannot_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def definitions() -> tuple[bool, list[tuple[str, str, int, int, str | None]]]:
        record = analyse_source("include/shop/format.h", HEADER_BEFORE_PREPROCESSING)
        assert record is not None
        return record["partial"], [
            (item["name"], item["kind"], item["line"], item["end_line"], item["container"])
            for item in record["functions"]
        ]

    assert definitions() == (
        False,
        [
            ("shop", "type", 9, 34, None),
            ("size_padding", "type", 11, 21, None),
            ("size_padding", "method", 15, 20, "size_padding"),
            ("write_int", "function", 23, 27, None),
            ("format_error", "class", 29, 32, None),
            ("code", "method", 31, 31, "format_error"),
        ],
    )
    # read as written, the include guard is one error and only one function is found
    monkeypatch.delitem(REREADINGS, "cpp")
    assert definitions() == (True, [("write_int", "function", 23, 27, None)])


def test_blanking_keeps_every_byte_and_line_where_it_was() -> None:
    from szrag.code.languages import parser
    from szrag.code.rereading import (
        best_reading,
        error_bytes,
        first_branches,
        members_ended,
        without_specifier_macros,
    )

    source = HEADER_BEFORE_PREPROCESSING.encode()
    kotlin = b"class A {\r\n  companion object { const val X = 1 }\r\n}\r\n"
    for written, blanked in (
        (source, first_branches(source)),
        (source, without_specifier_macros(source)),
        (kotlin, members_ended(kotlin)),
    ):
        assert len(blanked) == len(written)
        assert blanked.count(b"\n") == written.count(b"\n")
        assert blanked.count(b"\r") == written.count(b"\r")
    plain = first_branches(source)
    assert b"#if" not in plain and b"#endif" not in plain and b"#define SHOP_FORMAT_H_" in plain
    macros = without_specifier_macros(plain)
    assert b"SHOP_CONSTEXPR" not in macros and b"SHOP_API" not in macros
    assert b"#  define SHOP_USE_STRING_VIEW" in without_specifier_macros(source)
    assert members_ended(kotlin) == b"class A {\r\n  companion object { const val X = 1;}\r\n}\r\n"
    tree = parser("cpp").parse(source)
    assert error_bytes(tree, "cpp") > 0
    best, reread = best_reading("cpp", source, tree)
    assert len(best) == len(source) and error_bytes(reread, "cpp") < error_bytes(tree, "cpp")
    # an error in a small part of a file is left where it is: the file is read once
    local = b"#if HAS(<x>)\n#endif\n" + b"int total(int a) {\n  return a;\n}\n" * 40
    local_tree = parser("c").parse(local)
    assert 0 < error_bytes(local_tree, "c") < len(local) / 10
    assert best_reading("c", local, local_tree) == (local, local_tree)
    # a file that parses is read once, as it is
    clean = b"int total(int a) {\n  return a;\n}\n"
    clean_tree = parser("c").parse(clean)
    assert best_reading("c", clean, clean_tree) == (clean, clean_tree)


C_BRANCHES_OPEN_THEIR_OWN_BRACES = (
    """\
static int check(int a, int b) {
#if defined(HAVE_FAST)
  if (a && b) {
#else
  if (a) {
#endif
    return 1;
  }
  return 0;
}
"""
    + "".join(f"int helper{n}(int x) {{\n  return x + {n};\n}}\n" for n in range(8))
    + "int broken(int x) {\n  return x +* ;\n}\n"
)

C_TYPE_NAMED_LIKE_A_MACRO = """\
#ifndef DRV_H
#define DRV_H
#if DRV_HAS_INCLUDE(<stdint.h>)
#include <stdint.h>
#endif
typedef int STATUS_CODE;
STATUS_CODE dev_open(int *info) {
  return 0;
}
DRV_EXPORT const char *dev_name(void) {
  return "d";
}
int dev_count(void) {
  return 1;
}
#endif
"""


def test_c_read_again_keeps_a_conditionals_first_branch_and_every_function() -> None:
    # reading both branches would open two braces and close one: check would own the rest
    record = analyse_source("src/check.c", C_BRANCHES_OPEN_THEIR_OWN_BRACES)
    assert record is not None
    spans = [(item["name"], item["line"], item["end_line"]) for item in record["functions"]]
    assert spans[:2] == [("check", 1, 10), ("helper0", 11, 13)]
    assert [name for name, _, _ in spans] == [
        "check",
        *(f"helper{n}" for n in range(8)),
        "broken",
    ]
    # STATUS_CODE is a type: blanked as a macro, dev_open would no longer be a function,
    # and a reading that finds fewer functions is not kept
    record = analyse_source("include/drv.h", C_TYPE_NAMED_LIKE_A_MACRO)
    assert record is not None
    assert [item["name"] for item in record["functions"] if item["kind"] == "function"] == [
        "dev_open",
        "dev_name",
        "dev_count",
    ]


def test_c_read_again_reads_the_live_branch_types_with_their_macro_and_no_branch_for_nothing() -> (
    None
):
    # an #if 0's #else is the code that is read
    disabled = """\
#ifndef LIB_H
#define LIB_H
#if LIB_HAS_INCLUDE(<string_view>)
#  define LIB_VIEW 1
#endif
#if 0
int old_parse(int x) {
  return x;
}
#else
int parse(int x) {
  return x + 1;
}
#endif
#endif
"""
    record = analyse_source("lib.h", disabled)
    assert record is not None
    assert [item["name"] for item in record["functions"]] == ["parse"]
    # blanking the export macro makes the struct a struct (one function fewer for error
    # recovery, one type more): kept
    exported = """\
#ifndef LIB_H
#define LIB_H
#if LIB_HAS_INCLUDE(<string_view>)
#  define LIB_VIEW 1
#endif
struct LIB_EXPORT options {
  int width;
};
LIB_INLINE int twice(int x) {
  return x * 2;
}
LIB_INLINE int thrice(int x) {
  return x * 3;
}
#endif
"""
    record = analyse_source("options.h", exported)
    assert record is not None and not record["partial"]
    assert [(item["name"], item["kind"]) for item in record["functions"]] == [
        ("options", "type"),
        ("twice", "function"),
        ("thrice", "function"),
    ]
    # keeping the first branch helps nothing here: the macros are blanked in the text as
    # written, and the #else's function stays
    branches = """\
#ifdef _WIN32
int open_port(int n) {
  return n;
}
#else
int open_port(int n) {
  return n + 1;
}
int posix_only(void) {
  return 0;
}
#endif
""" + "".join(f"LIB_API int parse{n}(int x) {{\n  return x;\n}}\n" for n in range(4))
    record = analyse_source("port.c", branches)
    assert record is not None
    assert "posix_only" in [item["name"] for item in record["functions"]]


def test_kotlin_one_line_bodies_keep_the_file_and_their_owners() -> None:
    source = """\
class Outer {
    companion object Factory { fun make() = Outer() }
    object Keys { const val B = "b" }
    inner class In { fun x() {} }
    interface L { fun on() }
    fun a() = 1
    fun bind(v: View) {
        v.setOnClickListener { _ -> }
    }
}
fun top() = 1
"""
    record = analyse_source("Outer.kt", source)
    assert record is not None and not record["partial"]
    assert [(item["name"], item["container"]) for item in record["functions"]] == [
        ("Outer", None),
        ("make", "Outer"),
        ("Keys", "Outer"),
        ("In", "Outer"),
        ("x", "In"),
        ("L", "Outer"),
        ("on", "L"),
        ("a", "Outer"),
        ("bind", "Outer"),
        ("top", None),
    ]


def test_kotlin_extension_functions_belong_to_the_type_they_extend_outside_a_class() -> None:
    source = """\
fun Request.Builder.cacheControl(x: Int): Request.Builder = this
fun String?.orBlank(): String = this ?: ""
fun <T> T.clamp(): T = this
class A {
    fun Int.twice(): Int = this * 2
}
"""
    record = analyse_source("Ext.kt", source)
    assert record is not None
    assert [(item["name"], item["container"]) for item in record["functions"]] == [
        ("cacheControl", "Builder"),
        ("orBlank", "String"),
        ("clamp", None),  # an extension of any type
        ("A", None),
        ("twice", "A"),  # a member extension is its class's
    ]


def test_swift_subscripts_are_no_calls_and_a_generic_extension_keeps_its_type() -> None:
    source = """\
extension Array<Int> {
    func total() -> Int { 0 }
}
func run() {
    let key = cache["key"]
    let first = store.items[0]
    load { print(key) }
    store.save(first)
}
"""
    record = analyse_source("Cache.swift", source)
    assert record is not None
    assert [(item["name"], item["container"]) for item in record["functions"]] == [
        ("total", "Array"),
        ("run", None),
    ]
    assert sorted({call["name"] for call in record["calls"]}) == ["load", "print", "save"]
