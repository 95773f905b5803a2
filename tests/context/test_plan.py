"""The context plan: budget, tokenizer and packing from profile, repository, environment and
caller, and a budget that keeps the whole model request inside a known context window."""

from __future__ import annotations

from pathlib import Path

import pytest

from szrag.base.config import RepoConfig, load_repo_config, profile_named
from szrag.base.errors import ConfigError
from szrag.context.plan import ContextPlan


def test_each_profile_has_its_own_defaults() -> None:
    default = ContextPlan.of(RepoConfig(), {})
    assert (default.budget, default.tokenizer, default.packing) == (
        12000,
        "cl100k_base",
        "evidence",
    )
    spec = ContextPlan.of(RepoConfig(profile=profile_named("slackzilla")), {})
    assert (spec.budget, spec.tokenizer, spec.packing) == (4000, "estimate", "spec")
    assert default.window is None and default.fitted([{"content": "x" * 99999}]) == 12000


def test_the_caller_beats_the_environment_which_beats_the_repository(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text("context_budget = 9000\ncontext_window = 8192\n")
    config = load_repo_config(tmp_path)
    assert ContextPlan.of(config, {}).budget == 9000
    assert ContextPlan.of(config, {"SZRAG_CONTEXT_BUDGET": "6000"}).budget == 6000
    assert ContextPlan.of(config, {"SZRAG_CONTEXT_BUDGET": "6000"}, budget=300).budget == 300
    assert ContextPlan.of(config, {}).window == 8192
    assert ContextPlan.of(config, {"SZRAG_CONTEXT_WINDOW": "4096"}).window == 4096
    assert ContextPlan.of(config, {"SZRAG_TOKENIZER": "estimate"}).tokenizer == "estimate"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"SZRAG_CONTEXT_BUDGET": "lots"}, "SZRAG_CONTEXT_BUDGET must be a whole number"),
        ({"SZRAG_CONTEXT_WINDOW": "-5"}, "SZRAG_CONTEXT_WINDOW must be 0 or more"),
        ({"SZRAG_ANSWER_TOKENS": "1.5"}, "SZRAG_ANSWER_TOKENS must be a whole number"),
    ],
)
def test_bad_settings_are_clear_errors(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ContextPlan.of(RepoConfig(), environ)


def test_bad_repository_values_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text('context_window = "big"\n')
    with pytest.raises(ConfigError, match="context_window must be a positive whole number"):
        load_repo_config(tmp_path)


def test_a_known_window_leaves_room_for_prompt_tools_and_answer() -> None:
    plan = ContextPlan(
        budget=12000, tokenizer="estimate", packing="evidence", window=4000, answer_tokens=1000
    )
    messages = [{"role": "system", "content": "s" * 400}, {"role": "user", "content": "u" * 400}]
    tools = [{"type": "function", "function": {"name": "getStatus", "parameters": {}}}]
    left = plan.fitted(messages, tools)
    assert left == 4000 - 1000 - (4 + 100) - (4 + 100) - plan.counter()(str(tools).replace(" ", ""))
    assert plan.fitted(messages) > left  # no tools, more room
    tight = ContextPlan(budget=500, tokenizer="estimate", packing="evidence", window=4000)
    assert tight.fitted(messages) == 500  # never more than the budget
    full = ContextPlan(budget=500, tokenizer="estimate", packing="evidence", window=100)
    assert full.fitted(messages) == 0  # nothing left: no context rather than an overflow
