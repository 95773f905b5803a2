"""One configuration: every variable in one registry, read once into a ``Config``, and one
table of them in ``docs/CONFIGURATION.md``."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from szrag.base.config import _KNOWN_KEYS, _RUNTIME_KEYS, ConversationConfig
from szrag.base.errors import ConfigError
from szrag.base.variables import (
    CONFIG_NAMES,
    KEYS,
    NAMES,
    PARTS_BY_KEY,
    VARIABLES,
    VARIABLES_BY_NAME,
    main,
    rendered,
)
from szrag.service.configuration import Config, load_config
from szrag.service.host import Host

REPOSITORY = Path(__file__).resolve().parents[1]
SOURCE = REPOSITORY / "src" / "szrag"
DOCUMENT = REPOSITORY / "docs" / "CONFIGURATION.md"
NAME = re.compile(r"(SZRAG|AI|OPENAI|SLACK)_[A-Z0-9_]*[A-Z0-9]")


class Recording(Mapping[str, str]):
    """An environment mapping that remembers every name looked up in it."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.given = dict(values or {})
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.read.add(name)
        return self.given[name]

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self.read.add(name)
        return name in self.given

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the configuration reads variables by name, never all of them")

    def __len__(self) -> int:
        return len(self.given)


def string_constants() -> Iterator[tuple[str, str]]:
    """(module, text) of every string constant in ``src/szrag`` but the registry itself."""
    for path in sorted(SOURCE.rglob("*.py")):
        if path.name == "variables.py" and path.parent == SOURCE / "base":
            continue
        module = path.relative_to(SOURCE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = {  # the names in __all__ are Python names (SLACK_API_URL), not variables
            id(item)
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            )
            for item in ast.walk(node.value)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in exported
            ):
                yield module, node.value


def test_the_document_holds_the_tables_the_registry_makes() -> None:
    document = DOCUMENT.read_text(encoding="utf-8")
    assert rendered(document) == document, (
        "run: python -m szrag.base.variables docs/CONFIGURATION.md"
    )
    assert main(["--check", str(DOCUMENT)]) == 0
    for name in NAMES:
        assert f"| `{name}` |" in document, name


def test_every_variable_named_in_the_source_is_registered() -> None:
    named = {text for _, text in string_constants() if NAME.fullmatch(text)}
    assert named - set(NAMES) == set()


def test_every_registered_variable_is_read_by_the_source() -> None:
    constants = {text for _, text in string_constants()}
    assert set(NAMES) - constants == set()
    assert len(set(NAMES)) == len(NAMES)
    assert {variable.part for variable in VARIABLES} <= set(PARTS_BY_KEY)


def test_loading_the_configuration_reads_every_variable_it_holds(tmp_path: Path) -> None:
    environ = Recording({"PATH": "/usr/bin"})  # not empty: an empty mapping may be skipped
    load_config(tmp_path, environ)
    assert environ.read == set(CONFIG_NAMES)


def test_the_variable_a_repository_names_for_its_token_is_read(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text(
        '[runtime]\nurl = "http://127.0.0.1:9000"\ntoken_env = "SHOP_TOKEN"\n'
    )
    environ = Recording({"SHOP_TOKEN": "from-the-environment"})
    config = load_config(tmp_path, environ)
    assert environ.read == {*CONFIG_NAMES, "SHOP_TOKEN"}
    assert config.runtime.token == "from-the-environment"


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _held(config: Config, dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize(
    "variable", [variable for variable in VARIABLES if variable.field], ids=lambda v: v.name
)
def test_the_default_shown_is_the_default_read(tmp_path: Path, variable: Any) -> None:
    config = load_config(tmp_path, {})
    value = _held(config, variable.field)
    shown = "on" if value is True else _shown(value)
    assert shown in variable.default, (variable.name, value)


def test_every_key_of_the_repository_file_is_documented() -> None:
    documented = {key.name for key in KEYS}
    tables = {"runtime", "conversations"}
    wanted = (
        (_KNOWN_KEYS - tables)
        | {f"runtime.{key}" for key in _RUNTIME_KEYS}
        | {f"conversations.{item.name}" for item in dataclasses.fields(ConversationConfig)}
    )
    assert documented == wanted
    for key in KEYS:
        assert key.variable is None or key.variable in VARIABLES_BY_NAME, key.name


def test_the_suite_runs_with_none_of_the_variables_set() -> None:
    assert sorted(set(NAMES) & set(os.environ)) == []


# ---- the Config ------------------------------------------------------------------------


def test_the_environment_wins_over_the_repository_file(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text(
        "context_budget = 3000\ncontext_window = 8000\ntools = false\n[conversations]\nturns = 4\n"
    )
    from_file = load_config(tmp_path, {})
    assert (from_file.plan.budget, from_file.plan.window) == (3000, 8000)
    assert (from_file.live_tools, from_file.conversations.turns) == (False, 4)

    environ = {
        "SZRAG_CONTEXT_BUDGET": "900",
        "SZRAG_CONTEXT_WINDOW": "16000",
        "SZRAG_TOOLS": "1",
        "SZRAG_CONVERSATION_TURNS": "6",
    }
    from_both = load_config(tmp_path, environ)
    assert (from_both.plan.budget, from_both.plan.window) == (900, 16000)
    assert (from_both.live_tools, from_both.conversations.turns) == (True, 6)
    assert from_both.repository == from_file.repository


def test_the_config_is_read_once_and_the_host_keeps_no_environment(tmp_path: Path) -> None:
    environ = {"SZRAG_CONTEXT_BUDGET": "700", "SZRAG_AUDIT_LOG": "off", "RELEASE": "2.0.0"}
    host = Host.from_env(tmp_path, environ)
    environ["SZRAG_CONTEXT_BUDGET"] = "5"  # a later change reaches nothing

    assert not hasattr(host, "environ")
    assert host.plan().budget == 700
    assert host.plan(budget=40).budget == 40 and host.config.plan.budget == 700
    assert host.audit.path is None and host.runtime.status().deployment == {"release": "2.0.0"}
    with pytest.raises(ConfigError, match="the context budget must be 0 to"):
        host.plan(budget=-1)


def test_the_host_is_made_from_the_config_it_is_given(tmp_path: Path) -> None:
    config = load_config(tmp_path, {"SZRAG_COMMAND_ALLOWLIST": "ping", "AI_MODEL": "m1"})
    host = Host.of(config)

    assert host.config is config and host.root == tmp_path
    assert host.policy.allowlist.describe() == "ping" and host.settings.ai_model == "m1"
    changed = host.replace(
        live_tools=False, settings=dataclasses.replace(host.settings, ai_model="m2")
    )
    assert (changed.live_tools, changed.settings.ai_model) == (False, "m2")
    assert changed.config.allowlist == config.allowlist and host.live_tools is True


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"SZRAG_AI_READ_TIMEOUT": "soon"}, "SZRAG_AI_READ_TIMEOUT must be a number"),
        ({"SZRAG_CONTEXT_BUDGET": "lots"}, "SZRAG_CONTEXT_BUDGET must be a whole number"),
        ({"SZRAG_RATE_BURST": "-1"}, "SZRAG_RATE_BURST must be 0 or more"),
        ({"SZRAG_SLACK_THREAD_REPLIES": "some"}, "SZRAG_SLACK_THREAD_REPLIES must be all or"),
        ({"SZRAG_JOURNAL_UNIT": "not a unit!"}, "is not a systemd unit name"),
        ({"SZRAG_TOOLS": "maybe"}, "SZRAG_TOOLS must be 1 or 0"),
    ],
)
def test_a_bad_value_is_refused_as_the_config_is_read(
    tmp_path: Path, environ: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, environ)
