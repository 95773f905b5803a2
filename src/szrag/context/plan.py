"""How much repository context a question gets, how it is counted, and what must fit.

The plan is read once, with the rest of the configuration (``szrag.service.configuration``), from,
strongest first: ``SZRAG_CONTEXT_BUDGET``, the repository's ``context_budget``, and the
profile's default (12,000 tokens; the ``slackzilla`` profile keeps the original's 4,000 and
its estimate); a question's explicit budget (``--budget``, the HTTP body) then wins
(:meth:`ContextPlan.budgeted`). Tokens are counted with ``SZRAG_TOKENIZER`` or the profile's
tokenizer (``cl100k_base``, shipped offline; the estimate with a note when it cannot load).

When the model's context window is known (``SZRAG_CONTEXT_WINDOW`` or ``context_window``), the
budget shrinks so that the whole request fits: the system prompt, the question and the rest
of the user message, the tool definitions and the reserve for the answer
(``SZRAG_ANSWER_TOKENS``, 1,024) are counted with the same tokenizer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from szrag.base.config import RepoConfig
from szrag.base.env import number as env_number
from szrag.base.env import text as env_text
from szrag.base.errors import ConfigError
from szrag.context.tokens import TOKENIZER_SETTING, TokenCounter, load_counter

BUDGET_SETTING = "SZRAG_CONTEXT_BUDGET"
WINDOW_SETTING = "SZRAG_CONTEXT_WINDOW"
ANSWER_SETTING = "SZRAG_ANSWER_TOKENS"
DEFAULT_ANSWER_TOKENS = 1024
MESSAGE_OVERHEAD = 4  # tokens a chat template adds around each message
MAX_BUDGET = 2_000_000


@dataclass(frozen=True, slots=True)
class ContextPlan:
    """The budget, tokenizer and packing for one question, and the window it must fit."""

    budget: int
    tokenizer: str
    packing: str
    window: int | None = None
    answer_tokens: int = DEFAULT_ANSWER_TOKENS

    @classmethod
    def of(
        cls,
        config: RepoConfig,
        environ: Mapping[str, str],
        *,
        budget: int | None = None,
    ) -> ContextPlan:
        """The plan ``config`` and ``environ`` describe; ``budget``, when given, wins."""
        env = environ
        profile = config.profile
        chosen = budget
        if chosen is None:
            raw = env_number(env, BUDGET_SETTING, -1, integer=True)
            chosen = int(raw) if raw >= 0 else config.context_budget or profile.context_budget
        _check_budget(chosen)
        window = int(env_number(env, WINDOW_SETTING, 0, integer=True)) or config.context_window
        answer = int(env_number(env, ANSWER_SETTING, DEFAULT_ANSWER_TOKENS, integer=True))
        return cls(
            budget=chosen,
            tokenizer=env_text(env, TOKENIZER_SETTING).lower() or profile.tokenizer,
            packing=profile.packing,
            window=window or None,
            answer_tokens=answer,
        )

    def budgeted(self, budget: int | None) -> ContextPlan:
        """This plan with ``budget`` (a question's ``--budget`` or request ``budget``) instead
        of its own; itself when ``budget`` is None."""
        if budget is None:
            return self
        _check_budget(budget)
        return replace(self, budget=budget)

    def counter(self) -> TokenCounter:
        """The token counter the plan names (loaded once per process)."""
        return load_counter(self.tokenizer)

    def fitted(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """The budget left for repository context once ``messages`` (the request without
        its context) and ``tools`` are counted, so the request fits the window; the plain
        budget when no window is known. 0 when nothing is left."""
        if self.window is None:
            return self.budget
        count = self.counter()
        used = self.answer_tokens
        for message in messages:
            used += MESSAGE_OVERHEAD + count(str(message.get("content") or ""))
        if tools:
            used += count(json.dumps(list(tools), separators=(",", ":")))
        return max(0, min(self.budget, self.window - used))


def _check_budget(budget: int) -> None:
    if budget < 0 or budget > MAX_BUDGET:
        raise ConfigError(f"the context budget must be 0 to {MAX_BUDGET} tokens, not {budget}")
