"""The command a question names or asks for: run once, its input and output kept from
whoever may not see them (the audit log, a kept conversation, the model)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from szrag.answer.question import Admitted
from szrag.answer.results import CommandReport
from szrag.base.activity import COMPLETED, FAILED, STARTED, ActivityRecorder, plural
from szrag.base.activity import new_id as new_activity_id
from szrag.base.errors import CommandError
from szrag.base.public import public_dict
from szrag.commands import (
    CommandRegistry,
    CommandRunner,
    infer_command_invocation,
    redact_invocation_secrets,
)
from szrag.commands.inference import withhold_named_input
from szrag.commands.model import Permit, WithheldOutput

SECRET_OUTPUT_NOTE = (
    "The command ran. Its output is secret, so it was shown to the asker only and is not "
    "given to you; do not guess it."
)


@dataclass(frozen=True, slots=True)
class CommandRun:
    """The command run for a question: its result record and the input it was given."""

    report: CommandReport
    input: str
    sensitive: bool = False
    shown_question: str | None = None  # the question with any secret it carried withheld
    secret_output: bool = False

    @property
    def prompt_input(self) -> str | None:
        """The input as the model may see it: withheld when the command marks it sensitive."""
        return None if self.sensitive else self.input

    @property
    def prompt_record(self) -> dict[str, Any]:
        """The result as the model may see it: a secret output is replaced by a note."""
        report = self.report
        if not self.secret_output or report.error is not None:
            return public_dict(report)
        return public_dict(WithheldOutput(report.id, report.command, (), SECRET_OUTPUT_NOTE))


def withheld_question(
    question: str,
    registry: CommandRegistry,
    *,
    command_id: str | None,
    command_text: str | None,
) -> str:
    """``question`` as the audit log, a kept conversation and the model may see it: the input
    of a sensitive command (named by the caller, or with ``/sz-`` in the question) and a hash
    request's password replaced by markers; unchanged when it holds neither."""
    if command_id is None:
        return redact_invocation_secrets(question, infer_command_invocation(question, registry))
    spec = registry.get(command_id)
    if spec is None:
        return question
    # the caller's input for a sensitive command may sit in the question too
    return withhold_named_input(question, command_text or "", sensitive=spec.sensitive)


async def run_question_command(
    admitted: Admitted, recorder: ActivityRecorder, runner: CommandRunner
) -> CommandRun | None:
    """Run the command the question names (its permit, checked when it was admitted) or asks
    for; None when there is none.

    One inferred from the question runs as ``inference`` (the runner's policy applies: the
    allowlist); a command refused or failing while it runs becomes a failed activity and a
    record with ``error``."""
    question, named = admitted.text, admitted.question.command
    command: str | Permit
    if admitted.permit is not None and named is not None:
        spec, text, source = admitted.permit.spec, named.text, admitted.permit.source
        command = admitted.permit
        shown = withheld_question(question, runner.registry, command_id=spec.id, command_text=text)
    else:
        invocation = infer_command_invocation(question, runner.registry)
        if invocation is None:
            return None
        found = runner.registry.get(invocation.id)
        if found is None:
            raise CommandError(f"unknown command: {invocation.id}")
        spec, text, source, command = found, invocation.text, "inference", invocation.id
        shown = withheld_question(question, runner.registry, command_id=None, command_text=text)
    pair = new_activity_id()
    # The input stays out of activity metadata: it may hold a secret (hash passwords).
    details = {"id": spec.id, "command": spec.name, "inferred": source == "inference"}
    await recorder.record(
        "command", STARTED, f"Running {spec.name}", activity_id=pair, metadata=details
    )
    kept = functools.partial(
        CommandRun,
        input=text,
        sensitive=spec.sensitive,
        shown_question=shown,
        secret_output=spec.secret_output,
    )
    try:
        result = await runner.run(command, text, admitted.question.identity, source=source)
    except CommandError as error:
        await recorder.record(
            "command",
            FAILED,
            f"{spec.name} failed: {error.message}",
            activity_id=pair,
            metadata=details,
        )
        return kept(CommandReport(spec.id, spec.name, error=error.message))
    count = len(result.responses)
    await recorder.record(
        "command",
        COMPLETED,
        f"{spec.name} responded ({plural(count, 'response')})",
        activity_id=pair,
        metadata={**details, "responses": count},
    )
    return kept(CommandReport(result.id, result.command, result.responses))
