"""The command allowlist: default, explicit, from the environment."""

from __future__ import annotations

from szrag.commands import SAFE_BUILTINS, Allowlist


def test_default_is_the_safe_builtins() -> None:
    allowlist = Allowlist()
    assert allowlist.ids == SAFE_BUILTINS
    assert allowlist.allows("hash") and allowlist.allows("/sz-hash")
    assert not allowlist.allows("ask")


def test_explicit_list_normalises_names() -> None:
    allowlist = Allowlist.of(["/sz-Deploy", " ping ", ""])
    assert allowlist.ids == frozenset({"deploy", "ping"})
    assert allowlist.allows("DEPLOY") and not allowlist.allows("echo")
    assert allowlist.describe() == "deploy, ping"


def test_from_environment() -> None:
    assert Allowlist.from_env({}).ids == SAFE_BUILTINS
    assert Allowlist.from_env({"SZRAG_COMMAND_ALLOWLIST": "ping, uuid"}).ids == frozenset(
        {"ping", "uuid"}
    )
    everything = Allowlist.from_env({"SZRAG_COMMAND_ALLOWLIST": " * "})
    assert everything.ids is None and everything.allows("anything")
    assert everything.describe() == "every command"
    nothing = Allowlist.from_env({"SZRAG_COMMAND_ALLOWLIST": ""})
    assert nothing.ids == frozenset() and not nothing.allows("ping")
    assert nothing.describe() == "no commands"
