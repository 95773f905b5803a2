"""The registry: registration, lookup, and plugins from installed entry points."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from szrag.commands import CommandContext, CommandRegistry, CommandRunner, CommandSpec


async def _noop(context: CommandContext) -> None:
    context.respond("ok")


def test_register_and_look_up() -> None:
    registry = CommandRegistry()
    spec = registry.register(CommandSpec("deploy", "Deploy.", _noop, category="ops"))
    assert spec.name == "/sz-deploy"
    assert registry.get("deploy") is spec
    assert registry.get("/sz-deploy") is spec
    assert registry.get("/SZ-DEPLOY") is spec
    assert "deploy" in registry and "nope" not in registry
    assert registry.ids() == ["deploy"] and len(registry) == 1


def test_custom_slash_name() -> None:
    registry = CommandRegistry([CommandSpec("feedback", "Send feedback.", _noop, name="/fb")])
    assert registry.get("/fb") is registry.get("feedback")


def test_duplicates_need_replace() -> None:
    registry = CommandRegistry([CommandSpec("deploy", "Deploy.", _noop)])
    with pytest.raises(ValueError, match="already registered"):
        registry.register(CommandSpec("deploy", "Again.", _noop))
    registry.register(CommandSpec("deploy", "Again.", _noop), replace=True)
    assert registry.get("deploy") is not None
    assert registry.get("deploy").description == "Again."  # type: ignore[union-attr]
    assert registry.unregister("/sz-deploy") is not None and len(registry) == 0


@pytest.mark.parametrize("bad", ["", "Deploy", "has space", "-x", "a" * 65])
def test_invalid_ids_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid command id"):
        CommandSpec(bad, "Bad.")


async def test_decorator_registers_at_run_time(tmp_path: Path) -> None:
    registry = CommandRegistry()

    @registry.command("greet", "Say hello.", category="fun", usage="/sz-greet NAME")
    async def greet(context: CommandContext) -> None:
        context.respond(f"hello {context.text}")

    assert registry.get("greet").usage == "/sz-greet NAME"  # type: ignore[union-attr]
    result = await CommandRunner(registry=registry, root=tmp_path).run("greet", "ada")
    assert result.text == "hello ada"


def test_suggestions() -> None:
    registry = CommandRegistry([CommandSpec(i, "x", _noop) for i in ("release", "random", "roll")])
    assert registry.suggestions("/sz-relase") == ["release"]
    assert registry.suggestions("zzz") == []


PLUGIN_MODULE = """
from szrag.commands import CommandSpec


async def _wave(context):
    context.respond("wave " + context.text)


WAVE = CommandSpec("wave", "Wave at someone.", _wave, category="fun")
MANY = [CommandSpec("nod", "Nod.", _wave), CommandSpec("bow", "Bow.", _wave)]


def register(registry):
    registry.register(CommandSpec("shrug", "Shrug.", _wave))


NOT_A_COMMAND = 42
"""

ENTRY_POINTS = """[szrag.commands]
wave = szrag_plugin_fixture:WAVE
many = szrag_plugin_fixture:MANY
func = szrag_plugin_fixture:register
broken = szrag_plugin_fixture:MISSING
wrong = szrag_plugin_fixture:NOT_A_COMMAND
"""


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A distribution on sys.path that declares szrag.commands entry points."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "szrag_plugin_fixture.py").write_text(PLUGIN_MODULE)
    info = site / "szrag_plugin_fixture-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: szrag-plugin-fixture\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return str(site)


async def test_plugins_are_loaded_from_entry_points(installed_plugin: str, tmp_path: Path) -> None:
    registry = CommandRegistry()
    errors = registry.load_plugins()
    assert set(registry.ids()) == {"wave", "nod", "bow", "shrug"}
    failed = sorted(error.entry_point.split(" = ")[0] for error in errors)
    assert failed == ["broken", "wrong"]
    assert registry.plugin_errors == errors
    wrong = next(error for error in errors if error.entry_point.startswith("wrong"))
    assert "not int" in wrong.message
    result = await CommandRunner(registry=registry, root=tmp_path).run("/sz-wave", "hi")
    assert result.text == "wave hi"
