"""The shape of the house, checked from the source: arrows between packages run one way, one
place wires the host, only the faces read the environment, and public names are derived from
records, not written.

Imports are read with ``ast``, every kind counted: top-level, function-level and type-only
(a type a lower package needs is a protocol defined there). A unit is a top-level module or package of ``szrag`` (``szrag.rank``,
``szrag.answer``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"
FACES = {"szrag.cli", "szrag.server", "szrag.mcp", "szrag.__main__"}


def unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def imports(path: Path) -> Iterator[str]:
    """The szrag modules ``path`` imports, of every kind: at the top, inside a function, and
    under ``if TYPE_CHECKING:`` (a type-only import is still an arrow between packages)."""

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.found: list[str] = []

        def visit_Import(self, node: ast.Import) -> None:
            self.found.extend(alias.name for alias in node.names if alias.name.startswith("szrag"))

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.module == "szrag":
                self.found.extend(f"szrag.{alias.name}" for alias in node.names)
            elif node.module and node.module.startswith("szrag."):
                self.found.append(node.module)

    visitor = Visitor()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    yield from visitor.found


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in (SOURCE / "szrag").rglob("*.py"):
        module = ".".join(path.relative_to(SOURCE).with_suffix("").parts).removesuffix(".__init__")
        source = unit(module)
        targets = graph.setdefault(source, set())
        targets.update(unit(target) for target in imports(path) if unit(target) != source)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return found


def test_no_import_loops_between_packages() -> None:
    assert cycles(package_graph()) == []


def test_the_cycle_finder_finds_a_loop() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_library_never_imports_a_face() -> None:
    graph = package_graph()
    library = {name for name in graph if name not in FACES and name != "szrag"}
    offenders = {name: graph[name] & FACES for name in library if graph[name] & FACES}
    assert offenders == {}


def calls_in(path: Path, names: set[str]) -> list[str]:
    """The calls of ``names`` (``CommandRunner(...)``, ``Allowlist.from_env(...)``) in ``path``;
    a call given an empty literal mapping (``ContextPlan.of(config, {})``: the defaults, no
    environment) is not counted."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        if any(isinstance(arg, ast.Dict) and not arg.keys for arg in node.args):
            continue
        function = node.func
        name = (
            function.id
            if isinstance(function, ast.Name)
            else f"{ast.unparse(function.value)}.{function.attr}"
            if isinstance(function, ast.Attribute)
            else ""
        )
        if name in names:
            found.append(f"{path.relative_to(SOURCE)}:{node.lineno} {name}")
    return found


WIRING = {"CommandRunner", "ToolAdapter", "ProcessRuntime", "AuditLog.for_root"}


def test_one_place_assembles_the_host() -> None:
    """Runner, tools, runtime and audit log are wired together only in ``host.py`` (the
    runner module's own helper and the adapter's stand-alone form aside); faces and library
    calls take a host."""
    offenders = []
    for path in (SOURCE / "szrag").rglob("*.py"):
        if path.name in ("host.py", "runner.py", "doctor.py"):
            continue
        found = calls_in(path, WIRING)
        if path.name == "adapter.py":  # ToolAdapter.of builds one runner for tests
            found = [call for call in found if not call.endswith(" CommandRunner")]
        offenders.extend(found)
    assert offenders == []


# the readers that parse a part of the configuration from an environment mapping
READERS = {
    "Settings.from_env",
    "ServerSettings.from_env",
    "Allowlist.from_env",
    "ContextPlan.of",
    "ConversationLimits.of",
    "RuntimeSources.of",
    "live_tools_enabled",
    "audit_path",
    "AuditLog.for_root",
    "log_file_of",
    "deployment_fields",
}
# a reader's own module may call another (ServerSettings reads SZRAG_TOOLS as the model does)
READER_HOMES = {"base/settings.py", "service/audit.py", "runtime/__init__.py"}


def test_one_place_reads_the_environment_into_the_configuration() -> None:
    """The environment mapping is read into one ``Config``, in ``configuration.py``; no host,
    pipeline or face calls a reader again (``szrag doctor`` checks the provider alone, with
    no repository)."""
    offenders = []
    for path in (SOURCE / "szrag").rglob("*.py"):
        relative = path.relative_to(SOURCE / "szrag").as_posix()
        if relative == "service/configuration.py" or relative in READER_HOMES:
            continue
        found = calls_in(path, READERS)
        if relative == "cli/ask_cmds.py":
            found = [call for call in found if not call.endswith(" Settings.from_env")]
        offenders.extend(found)
    assert offenders == []


def test_only_the_faces_read_the_process_environment() -> None:
    offenders = []
    for path in (SOURCE / "szrag").rglob("*.py"):
        module = ".".join(path.relative_to(SOURCE).with_suffix("").parts)
        if unit(module) in FACES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) in (
                "os.environ",
                "os.getenv",
                "os.putenv",
            ):
                offenders.append(f"{module}:{node.lineno}")
    assert offenders == []


STORES = {"szrag.index", "szrag.conversations"}  # the store implementations
STORE_RULES = {"szrag.base.sqlite"}  # the SQLite rules they share, which only they import
SQL_STATEMENT = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|WITH)\b"
)
DATABASE_DRIVERS = {"sqlite3", "psycopg", "psycopg_pool"}


def sql_outside_stores(path: Path) -> list[str]:
    """What in ``path`` speaks to a database directly: a driver import, a SQL statement
    written as a string, an ``execute`` call."""
    found = []
    label = path.relative_to(SOURCE) if path.is_relative_to(SOURCE) else path.name
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{label}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [f"{where} imports {name}" for name in names if name in DATABASE_DRIVERS]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL_STATEMENT.match(node.value):
                found.append(f"{where} writes SQL")
        elif isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany"):
            found.append(f"{where} calls {node.attr}")
    return found


def test_sql_lives_only_in_the_stores() -> None:
    """Everything outside ``index/`` and ``conversations/`` reads stored data through their
    interfaces (``IndexStore``, the conversation store), so a second store implementation
    is a new module there, not a change to rankers, context or faces."""
    offenders = []
    for path in (SOURCE / "szrag").rglob("*.py"):
        module = ".".join(path.relative_to(SOURCE).with_suffix("").parts)
        if unit(module) not in STORES and module not in STORE_RULES:
            offenders.extend(sql_outside_stores(path))
            offenders.extend(
                f"{module} imports {name}" for name in imports(path) if name in STORE_RULES
            )
    assert offenders == []


def test_the_sql_finder_finds_sql(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'import sqlite3\nrows = conn.execute("SELECT path FROM files")\n', encoding="utf-8"
    )
    found = sql_outside_stores(sample)
    assert [item.split(" ", 1)[1] for item in found] == [
        "imports sqlite3",
        "calls execute",
        "writes SQL",
    ]


def test_every_kind_of_import_is_an_arrow(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "import szrag.base.text\n"
        "if TYPE_CHECKING:\n"
        "    from szrag.index.protocol import IndexStore\n"
        "def later() -> None:\n"
        "    from szrag import rank\n",
        encoding="utf-8",
    )
    assert sorted(imports(sample)) == ["szrag.base.text", "szrag.index.protocol", "szrag.rank"]


MAX_PARAMETERS = 10


def test_no_function_takes_more_than_ten_parameters() -> None:
    """A function needing more is handed a record (``Question``, ``ModelRequest``) instead."""
    offenders = []
    for path in (SOURCE / "szrag").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = node.args
                named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                count = len([a for a in named if a.arg not in ("self", "cls")])
                if count > MAX_PARAMETERS:
                    offenders.append(
                        f"{path.relative_to(SOURCE)}:{node.lineno} {node.name} ({count})"
                    )
    assert offenders == []


LAYERS = (  # top first; each package imports only its own layer and those below
    ("faces", {"szrag.cli", "szrag.server", "szrag.mcp", "szrag.__main__"}),
    ("service", {"szrag.service"}),
    (
        "pipeline",
        {
            "szrag.answer",
            "szrag.rank",
            "szrag.structure",
            "szrag.context",
            "szrag.llm",
            "szrag.tools",
            "szrag.commands",
            "szrag.runtime",
            "szrag.prompts",
        },
    ),
    ("store", {"szrag.index", "szrag.conversations"}),
    ("base", {"szrag.code", "szrag.base", "szrag.version", "szrag.queries"}),
)


def layer_of(unit_name: str) -> int:
    for depth, (_, units) in enumerate(LAYERS):
        if unit_name in units:
            return depth
    raise AssertionError(f"{unit_name} is in no layer: name its folder in LAYERS")


def test_the_folders_are_layers_and_imports_run_down() -> None:
    graph = package_graph()
    upward = sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        if source != "szrag"  # the package's own lazy exports name every layer
        for target in targets
        if target != "szrag" and layer_of(target) < layer_of(source)
    )
    assert upward == []


CAMEL_CASE = re.compile(r"^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$")

# Names written by hand because they belong to a wire format that is not one of szrag's own
# records: (module, names) -> why.
FOREIGN_NAMES: dict[tuple[str, frozenset[str]], str] = {
    (
        "szrag/tools/definitions.py",
        frozenset({"additionalProperties", "minLength", "maxLength"}),
    ): "JSON Schema keywords of the tool schemas",
    (
        "szrag/tools/definitions.py",
        frozenset({"commandId", "usageHint", "includeStack"}),
    ): "the live tools' argument names, as the original service's tools take them",
    (
        "szrag/tools/schema.py",
        frozenset({"additionalProperties", "minLength", "maxLength"}),
    ): "JSON Schema keywords of the code tools' schemas (the model's and MCP's)",
    (
        "szrag/tools/code.py",
        frozenset(
            {"searchCode", "findSymbols", "findReferences", "readCode", "startLine", "endLine"}
        ),
    ): "the code tools' names and argument names, as the model calls them (the live tools' style)",
    (
        "szrag/tools/adapter.py",
        frozenset(
            {
                "getStatus",
                "getCommands",
                "getReleaseInfo",
                "runCommand",
                "getLogs",
                "getErrors",
                "getMetrics",
                "getRoutes",
            }
        ),
    ): "the handler table, keyed by the live tools' names (the model calls them so)",
    (
        "szrag/runtime/sources.py",
        frozenset({"includeStack"}),
    ): "the query parameter of the running application's /api/admin/errors",
}


def written_keys(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """The string keys written in ``tree``: of dict displays, of ``dict(...)`` keywords and of
    subscript assignments (``record["key"] = ...``), with their lines."""
    for node in ast.walk(tree):
        keys: list[ast.expr | None] = []
        if isinstance(node, ast.Dict):
            keys = list(node.keys)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "dict":
            for keyword in node.keywords:
                if keyword.arg is not None:
                    yield node.lineno, keyword.arg
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            keys = [target.slice for target in targets if isinstance(target, ast.Subscript)]
        for key in keys:
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key.lineno, key.value


def test_the_key_finder_finds_written_keys() -> None:
    source = (
        'a = {"endLine": 1, **b}\nc = dict(startLine=2)\nd["relativePath"] = 3\ne.get("readOnly")'
    )
    assert list(sorted(written_keys(ast.parse(source)))) == [
        (1, "endLine"),
        (2, "startLine"),
        (3, "relativePath"),
    ]


def test_public_names_are_derived_not_written() -> None:
    """No module but ``public.py`` writes a camelCase key: records carry snake_case fields
    and ``szrag.base.public.to_public`` names them (wire formats of others aside, each with its
    reason in FOREIGN_NAMES)."""
    allowed: dict[str, set[str]] = {}
    for (module, names), _reason in FOREIGN_NAMES.items():
        allowed.setdefault(module, set()).update(names)
    offenders = []
    used: dict[str, set[str]] = {}
    for path in sorted((SOURCE / "szrag").rglob("*.py")):
        module = path.relative_to(SOURCE).as_posix()
        if module == "szrag/base/public.py":
            continue
        for line, key in written_keys(ast.parse(path.read_text(encoding="utf-8"))):
            if not CAMEL_CASE.match(key):
                continue
            if key in allowed.get(module, set()):
                used.setdefault(module, set()).add(key)
            else:
                offenders.append(f"{module}:{line} {key!r}")
    assert offenders == []
    assert used == allowed, "FOREIGN_NAMES lists names no module writes any more"


def test_no_caller_asks_whether_a_result_must_be_awaited() -> None:
    """Runtime reads are coroutines (``szrag.runtime.Runtime``: a blocking runtime is made one
    once, by ``as_runtime``, where the tools, the runner and the server are built), callbacks
    are typed by what they return: no module asks ``inspect.isawaitable`` of a result."""
    offenders = []
    for path in sorted((SOURCE / "szrag").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = (
                node.attr
                if isinstance(node, ast.Attribute)
                else node.id
                if isinstance(node, ast.Name)
                else node.name
                if isinstance(node, ast.alias)
                else ""
            )
            if named == "isawaitable":
                offenders.append(f"{path.relative_to(SOURCE)}:{getattr(node, 'lineno', 0)}")
    assert offenders == []
