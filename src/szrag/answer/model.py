"""The model's answer: the request's messages, the tool loop over the host's live tools, one
retry with less context when the window is smaller than counted, and a failure that still
answers from what was found."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from szrag.answer.command import CommandRun
from szrag.answer.evidence import Evidence
from szrag.answer.local import Found, local_answer
from szrag.answer.protocol import AnswerHost
from szrag.answer.question import Question
from szrag.answer.results import Answer, ModelFailure, Outcome
from szrag.base.activity import COMPLETED, FAILED, Activity, ActivityRecorder
from szrag.base.errors import ProviderError
from szrag.commands import Identity
from szrag.context import PackedContext, pack_repository_context
from szrag.context.plan import WINDOW_SETTING, ContextPlan
from szrag.llm.client import ChatClient
from szrag.llm.errors import Overflow, context_overflow, provider_code
from szrag.llm.loop import ToolExecutor, ToolLoop
from szrag.llm.prompts import (
    CODE_TOOLS_PROMPT,
    SYSTEM_PROMPT,
    TOOL_CALL_LIMIT_PROMPT,
    build_user_message,
    is_overridden,
    load_prompt,
)
from szrag.rank.retrieve import Image
from szrag.tools import ToolAdapter, ToolEvent

CUT_MARK = "answer cut"


LENGTH_NOTE = "the model stopped at its output limit; the answer may be incomplete"


def tools_for(
    host: AnswerHost, question: Question, recorder: ActivityRecorder
) -> ToolAdapter | None:
    """The host's live tools for ``question`` (None when not offered), their activities
    reported to ``recorder``."""
    if not (host.live_tools if question.tools is None else question.tools):
        return None

    def forward(event: ToolEvent) -> None:
        recorder.add_nowait(tool_activity(event))

    return host.tools(privileged=question.privileged, on_activity=forward)


def tool_activity(event: ToolEvent) -> Activity:
    """A tool adapter's event as an activity of the ``tool`` stage (details in metadata)."""
    return Activity(
        stage=event.stage,
        status=event.status,
        message=event.message,
        metadata=event.details(),
        kind=event.kind,
    )


def executor_for(
    adapter: ToolAdapter, identity: Identity, recorder: ActivityRecorder
) -> ToolExecutor:
    async def execute(name: str, arguments: str) -> str:
        result = await adapter.call(name, arguments, identity=identity)
        await recorder.flush()  # the tool's activity reached on_activity before the model goes on
        return result.text

    return execute


def smaller_budget(error: ProviderError, packed: PackedContext, counted: int) -> int | None:
    """A context budget that should fit after the provider refused the request as too long,
    or None when the refusal is not about length or there is no context to give up.

    The provider's own figures are used where it states them (OpenAI, vLLM and llama.cpp's
    Python server do: "maximum context length is W ... (M in the messages, C in the
    completion)"): its tokenizer may count a third more than ours, so the overshoot is
    converted at the ratio it implies. Otherwise half of the context goes."""
    overflow = context_overflow(error)
    if overflow is None or packed.tokens <= 0:
        return None
    if overflow.window is None or overflow.prompt is None or counted <= 0:
        return packed.tokens // 2
    ratio = overflow.prompt / counted  # the provider's tokens per token of ours
    allowed = (overflow.window - overflow.completion) / ratio * 0.95
    return max(
        0, min(packed.tokens // 2 + packed.tokens // 4, int(packed.tokens - (counted - allowed)))
    )


def window_advice(overflow: Overflow, counted: int) -> str:
    """What to change after a refusal as too long: the window setting, with the value that
    fits by the provider's own figures where it gave them."""
    if overflow.window is None:
        return (
            "the request is longer than the model's context window: set"
            f" {WINDOW_SETTING} to the model's context size so that szrag packs less context"
        )
    ratio = overflow.prompt / counted if overflow.prompt and counted > 0 else 1.0
    # the setting is counted in szrag's tokens; the provider's may be more of them
    fits = int(overflow.window / max(1.0, ratio)) // 64 * 64
    reported = f"the provider reported a window of {overflow.window} tokens"
    if overflow.prompt:
        reported += f" and counted {overflow.prompt} in the messages"
    return (
        f"the request is longer than the model's context window ({reported}): set"
        f" {WINDOW_SETTING}={fits} so that szrag packs the request to fit"
    )


def counted(
    messages: Sequence[Mapping[str, Any]], adapter: ToolAdapter | None, plan: ContextPlan
) -> int:
    """What the request weighs in our tokens: the messages and the tool definitions."""
    count = plan.counter()
    total = sum(count(str(message.get("content") or "")) for message in messages)
    if adapter is not None:
        total += count(json.dumps(adapter.definitions(), separators=(",", ":")))
    return total


def messages_for(
    question: str,
    repository_context: str,
    images: Sequence[Image],
    run: CommandRun | None,
    root: Path | str,
    live: str = "",
    *,
    prior: Sequence[Mapping[str, str]] = (),
    elsewhere: str = "",
    code_tools: bool = False,
) -> list[dict[str, Any]]:
    """The first request's messages: the system prompt (and, when the code tools are
    offered, how to use them), the earlier turns of a conversation (``prior``) and the user
    message."""
    system = load_prompt(SYSTEM_PROMPT, root)
    if code_tools and not is_overridden(SYSTEM_PROMPT, root):  # a repository's own rules stand
        system += "\n\n" + load_prompt(CODE_TOOLS_PROMPT, root)
    return [
        {"role": "system", "content": system},
        *(dict(message) for message in prior),
        {
            "role": "user",
            "content": build_user_message(
                question,
                repository_context=repository_context,
                images=[image.to_dict() for image in images],
                command=run.prompt_record if run else None,
                command_input=run.prompt_input if run else None,
                live_evidence=live,
                other_repositories=elsewhere,
            ),
        },
    ]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What the model is asked with: the question as it may see it, the evidence, the
    command run, what every answer carries, the context plan and the earlier turns."""

    question: str
    evidence: Evidence
    run: CommandRun | None
    found: Found
    plan: ContextPlan
    prior: tuple[Mapping[str, str], ...] = ()

    def messages(
        self, root: Path, evidence: Evidence | None = None, *, code_tools: bool = False
    ) -> list[dict[str, Any]]:
        """The first request's messages, with ``evidence`` (default: the request's); with
        ``code_tools``, the system prompt says how to use them."""
        evidence = evidence or self.evidence
        return messages_for(
            self.question,
            evidence.packed.text,
            self.found.images,
            self.run,
            root,
            evidence.live,
            prior=self.prior,
            elsewhere=evidence.elsewhere_text,
            code_tools=code_tools,
        )


async def answer_with_model(
    request: ModelRequest,
    host: AnswerHost,
    recorder: ActivityRecorder,
    adapter: ToolAdapter | None,
    question: Question,
) -> Answer:
    """The model's answer to ``request`` through the tool loop (over ``adapter``'s tools,
    for ``question``'s identity and listeners); a failure answers from what was found."""
    found, evidence, plan = request.found, request.evidence, request.plan
    messages = request.messages(host.root, code_tools=bool(adapter and adapter.code_tools))
    loop = ToolLoop(
        ChatClient(host.settings, http_client=host.http_client),
        limit_prompt=load_prompt(TOOL_CALL_LIMIT_PROMPT, host.root),
        tools=adapter.definitions() if adapter else None,
        executor=executor_for(adapter, question.identity, recorder) if adapter else None,
        recorder=recorder,
        on_token=question.listeners.on_token,
        label_of=adapter.label_of if adapter else None,
    )
    try:
        try:
            result = await loop.run(messages)
        except ProviderError as refused:
            budget = smaller_budget(refused, evidence.packed, counted(messages, adapter, plan))
            if budget is None or refused.partial_text:
                raise
            # the model's window is smaller than counted: pack less and ask once more
            evidence = await _repacked(evidence, plan, budget, recorder)
            messages = request.messages(
                host.root, evidence, code_tools=bool(adapter and adapter.code_tools)
            )
            result = await loop.run(messages)
    except ProviderError as error:
        said = await _failure(error, recorder, counted(messages, adapter, plan))
        intro = f"The model could not answer: {said.message.rstrip('.')}."
        answer = local_answer(intro, evidence, found.command, request.question)
        if error.partial_text.strip():  # what the model had said is kept, marked as cut
            answer = f"{error.partial_text.rstrip()}\n\n[{CUT_MARK}: {error.message}]\n\n{answer}"
        return found.answer(
            Outcome.MODEL_FAILED,
            answer,
            recorder,
            response_rounds=loop.requests,
            usage=loop.usage,
            error=said,
            running_commit=evidence.commit,
        )
    answer = result.answer
    if result.finish_reason == "length":
        await recorder.record(
            "ai", COMPLETED, LENGTH_NOTE, metadata={"finish_reason": result.finish_reason}
        )
        answer = f"{answer.rstrip()}\n\n[{LENGTH_NOTE}]"
    if evidence.drift:  # said whether or not the model mentions it
        answer = f"{answer.rstrip()}\n\n[{evidence.drift}]"
    return found.answer(
        Outcome.ANSWERED,
        answer,
        recorder,
        response_rounds=result.response_rounds,
        usage=result.usage,
        running_commit=evidence.commit,
    )


async def _repacked(
    evidence: Evidence, plan: ContextPlan, budget: int, recorder: ActivityRecorder
) -> Evidence:
    """``evidence`` packed again within ``budget``, with an activity that says so."""
    packed = pack_repository_context(
        evidence.sources,
        evidence.context,
        budget=budget,
        counter=plan.counter(),
        packing=plan.packing,
    )
    await recorder.record(
        "context",
        COMPLETED,
        f"The model's window is smaller than counted; packed {packed.tokens}"
        f" of {budget} tokens and asked again",
        metadata={"budget": budget, "tokens": packed.tokens},
    )
    return dataclasses.replace(evidence, packed=packed)


async def _failure(error: ProviderError, recorder: ActivityRecorder, weight: int) -> ModelFailure:
    """The failed ``ai`` activity and what the answer says of ``error``: for a refusal as too
    long, the window setting that fits (``weight``: the request in our tokens)."""
    code = provider_code(error)
    await recorder.record(
        "ai", FAILED, f"The model request failed: {error.message}", metadata={"code": code}
    )
    overflow = context_overflow(error) if not error.partial_text else None
    said = window_advice(overflow, weight) if overflow is not None else error.message
    return ModelFailure(code, said)
