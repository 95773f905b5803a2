"""One admitted question through the pipeline: its command, the evidence (with the
questions a follow-up follows), live evidence, then a local answer or the model's; the turn
kept in its conversation. The host admits and audits (``szrag.service.host.Host.ask``)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from szrag.answer.command import run_question_command
from szrag.answer.elsewhere import elsewhere_reserve, join_elsewhere
from szrag.answer.evidence import gather_evidence, public_context, public_source
from szrag.answer.history import History, followed_questions, history_messages
from szrag.answer.local import KEY_HELP, Found, local_answer
from szrag.answer.protocol import AnswerHost
from szrag.answer.question import Admitted, Question
from szrag.answer.results import Answer, DebugReport, InferredCommand, Outcome
from szrag.base.activity import COMPLETED, FAILED, ActivityRecorder, plural
from szrag.base.errors import ConversationError
from szrag.commands import infer_command_invocation, is_command_oriented, redact_invocation_secrets
from szrag.commands.inference import redact_password_phrases
from szrag.context.plan import ContextPlan
from szrag.conversations import ShownSource, Turn, new_id
from szrag.rank.retrieve import Image, require_question, source_notes
from szrag.runtime.git import read_git_head

T = TypeVar("T")

log = logging.getLogger("szrag.answer")


SECRET_ANSWER_KEPT = "(The answer showed a secret command output; it is not kept.)"
NOT_ASKED_INTRO = "The model was not asked (AI disabled); this is what the repository index found."
NO_MODEL_INTRO = "No model is configured, so this answer comes from retrieval alone."


async def answer(admitted: Admitted, host: AnswerHost) -> Answer:
    """The answer to an admitted question (see :mod:`szrag.answer` for what it holds), kept
    as a turn of its conversation when it continues one or asks to be remembered."""
    question = admitted.question
    earlier: tuple[Turn, ...] = ()
    conversation_id = admitted.conversation.id if admitted.conversation else None
    if conversation_id is not None:
        earlier = tuple(await asyncio.to_thread(host.conversations.turns, conversation_id))
    result, shown, secret = await _answer_turn(admitted, host, earlier)
    if conversation_id is None and not question.remember:
        return result
    return await _keep(
        result,
        host,
        conversation_id=conversation_id,
        question=shown,
        secret=secret,
        face=question.face,
        owner=question.identity.user_id,
    )


async def _keep(
    result: Answer,
    host: AnswerHost,
    *,
    conversation_id: str | None,
    question: str,
    secret: bool,
    face: str,
    owner: str,
) -> Answer:
    """``result`` kept as a turn of the conversation (a new one when no id is given), with
    its ids; when the store cannot keep it the answer is still returned, without ids."""
    store = host.conversations
    sources = tuple(ShownSource(item.path, item.start, item.end) for item in result.sources)

    def keep() -> Turn:  # in one worker thread: the commit read, then one transaction
        turn = Turn(
            answer_id=new_id(),
            conversation_id=conversation_id or new_id(),
            question=redact_password_phrases(question),
            answer=SECRET_ANSWER_KEPT if secret else result.answer,
            outcome=result.outcome.value,
            sources=sources,
            commit=result.running_commit or checkout_commit(host.root),
            asked_at=store.clock(),
        )
        if conversation_id is None:
            return store.start_with(turn, face=face, owner=owner)
        return store.append(turn)

    try:
        turn = await asyncio.to_thread(keep)
    except ConversationError as error:
        log.warning("the answer was given but could not be kept: %s", error.message)
        return result
    return dataclasses.replace(
        result, answer_id=turn.answer_id, conversation_id=turn.conversation_id
    )


def checkout_commit(root: Path | str) -> str | None:
    """The commit the checkout at ``root`` is at (its git HEAD), or None."""
    head = read_git_head(Path(root))
    return head.commit if head is not None else None


async def _answer_turn(
    admitted: Admitted, host: AnswerHost, earlier: Sequence[Turn]
) -> tuple[Answer, str, bool]:
    """The answer after the ``earlier`` turns, the question as the model may see it, and
    whether the answer shows a secret command output."""
    question, clean = admitted.question, admitted.text
    recorder = ActivityRecorder(question.listeners.on_activity)
    run = await run_question_command(admitted, recorder, host.runner)
    asks_model = question.with_ai and host.settings.has_key
    # the model never sees a password the question carried for a command
    shown = run.shown_question if run and run.shown_question else clean
    secret = run is not None and run.secret_output
    adapter = None
    if asks_model:  # the model's side (its client, tools and live sources) loads only here
        from szrag.answer.model import tools_for

        adapter = tools_for(host, question, recorder)
    followed = followed_questions(clean, earlier)
    with host.opened_index() as opened:
        plan = host.plan(budget=question.budget)
        history = History.empty()
        if asks_model and earlier:
            history = await _history(earlier, host, plan, recorder)

        # other repositories' sources, when routed here, take their share of the budget
        reserve = elsewhere_reserve(question.elsewhere, plan.budget, plan.counter())
        if adapter is not None and adapter.code_tools and plan.window is not None:
            from szrag.answer.model import messages_for

            # the code tools never take room from the evidence: a window too small for both
            # keeps the evidence whole
            bare = messages_for(
                shown, "", (), run, host.root, prior=history.messages, code_tools=True
            )
            if plan.fitted(bare, adapter.definitions()) < plan.budget:
                adapter = adapter.with_code_tools(False)

        def budget_for(images: Sequence[Image]) -> int:
            if not asks_model:
                return plan.budget - reserve
            from szrag.answer.model import messages_for

            bare = messages_for(
                shown,
                "",
                images,
                run,
                host.root,
                prior=history.messages,
                code_tools=bool(adapter and adapter.code_tools),
            )
            return plan.fitted(bare, adapter.definitions() if adapter else None) - reserve

        evidence = await gather_evidence(
            "\n".join((clean, *followed)),
            opened,
            recorder,
            limit=question.limit,
            plan=plan,
            budget_for=budget_for,
            expand=not is_command_oriented(clean),
            earlier=len(followed),
        )
        evidence = await join_elsewhere(
            evidence, question.elsewhere, reserve, plan.counter(), recorder
        )
    if asks_model:
        from szrag.answer.live import join_live
        from szrag.runtime.sources import ApplicationRuntime

        if isinstance(host.live, ApplicationRuntime):
            evidence = await join_live(clean, evidence, host.live, recorder)
    found = Found(
        tuple(public_source(source) for source in evidence.sources),
        evidence.images,
        run.report if run else None,
        evidence.elsewhere,
    )
    if not question.with_ai:
        text = local_answer(NOT_ASKED_INTRO, evidence, found.command, shown)
        return (
            found.answer(Outcome.NOT_ASKED, text, recorder, context=evidence.packed),
            shown,
            secret,
        )
    if not host.settings.has_key:
        await recorder.record("ai", FAILED, "AI_API_KEY is not set; answering from retrieval only")
        # what was found first, then how to get a written answer
        text = local_answer(NO_MODEL_INTRO, evidence, found.command, shown, closing=KEY_HELP)
        return found.answer(Outcome.NO_MODEL, text, recorder), shown, secret
    from szrag.answer.model import ModelRequest, answer_with_model

    request = ModelRequest(shown, evidence, run, found, plan, tuple(history.messages))
    return await answer_with_model(request, host, recorder, adapter, question), shown, secret


HISTORY_WINDOW_SHARE = 4  # with a known window, earlier turns take at most a quarter of it


async def _history(
    earlier: Sequence[Turn], host: AnswerHost, plan: ContextPlan, recorder: ActivityRecorder
) -> History:
    """The earlier turns as messages within the conversation token bound, with an activity."""
    budget = host.conversations.limits.tokens
    if plan.window is not None:
        budget = min(budget, plan.window // HISTORY_WINDOW_SHARE)
    history = history_messages(earlier, plan.counter(), budget)
    message = (
        f"Conversation: {plural(history.turns, 'earlier turn')} given to the model "
        f"({history.tokens} tokens)"
    )
    if history.dropped:
        message += f"; {plural(history.dropped, 'older turn')} left out to stay in {budget}"
    await recorder.record(
        "context",
        COMPLETED,
        message,
        metadata={
            "turns": history.turns,
            "dropped_turns": history.dropped,
            "tokens": history.tokens,
            "budget": budget,
        },
    )
    return history


async def debug(question: Question, host: AnswerHost) -> DebugReport:
    """Everything the model would be given for ``question``, without running a command or
    calling a model: the inferred command, sources, images, codebase context, packed context
    and activities."""
    clean = require_question(question.text)
    recorder = ActivityRecorder(question.listeners.on_activity)
    invocation = infer_command_invocation(clean, host.registry)
    oriented = is_command_oriented(clean)
    with host.opened_index() as opened:
        evidence = await gather_evidence(
            clean,
            opened,
            recorder,
            limit=question.limit,
            plan=host.plan(budget=question.budget),
            expand=not oriented,
        )
        notes = tuple(source_notes(opened, evidence.sources))
    withheld = invocation is not None and bool(invocation.withheld)
    return DebugReport(
        question=redact_invocation_secrets(clean, invocation),
        command=(
            InferredCommand(invocation.id, None if withheld else invocation.text)
            if invocation is not None
            else None
        ),
        command_oriented=oriented,
        sources=tuple(public_source(source) for source in evidence.sources),
        images=evidence.images,
        codebase_context=public_context(evidence.context) if evidence.context else None,
        context=evidence.packed,
        activities=tuple(recorder.activities),
        notes=notes,
    )
