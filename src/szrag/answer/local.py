"""The answer without a model: what was found, the lines that best match the question, and
what to do next; and :class:`Found`, what every answer carries."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from szrag.answer.elsewhere import MergedSource
from szrag.answer.evidence import Evidence
from szrag.answer.results import Answer, CommandReport, Outcome
from szrag.base.activity import ActivityRecorder
from szrag.base.redact import redact
from szrag.base.settings import DEFAULT_AI_MODEL, DEFAULT_AI_URL
from szrag.base.text import tokens, tokens_by_line
from szrag.context import CodebaseContext
from szrag.rank.retrieve import Image, Source

KEY_HELP = (
    "Set AI_API_KEY to a key for an OpenAI-compatible provider to get a written answer "
    f"(AI_URL and AI_MODEL choose the provider and model; the defaults are {DEFAULT_AI_URL} "
    f"and {DEFAULT_AI_MODEL})."
)


EXCERPT_SOURCES = 3  # sources shown with lines of their own in an answer without a model


EXCERPT_LINES = 6


EXCERPT_WHOLE = 12  # a unit this short is shown whole


EXCERPT_SYMBOLS = 5


_FENCE_LANGUAGE = re.compile(r"[a-z0-9+#-]{1,12}")


def excerpt(source: Source, question: str, lines: int = EXCERPT_LINES) -> list[str]:
    """Numbered lines of ``source`` as a fenced code block: a short unit whole, else its
    first line (the signature) and the lines around the one sharing most words with the
    question; redacted like everything a caller sees."""
    text = source.text.split("\n")
    if len(text) <= EXCERPT_WHOLE:
        numbers = list(range(len(text)))
    else:
        wanted = tokens(question)
        scores = [len(wanted & line_tokens) for line_tokens in tokens_by_line(source.text)]
        best = max(range(len(text)), key=lambda number: (scores[number], -number))
        first = max(0, min(best - 1, len(text) - lines))
        numbers = sorted({0, *range(first, first + lines)})
    width = len(str(source.start + numbers[-1]))
    shown = []
    for place, number in enumerate(numbers):
        if place and number != numbers[place - 1] + 1:
            shown.append(f"{'':>{width}} | …")
        line = redact(text[number], path=source.path).rstrip()
        shown.append(f"{source.start + number:>{width}} | {line[:160]}")
    suffix = source.path.rpartition(".")[2].lower() if "." in source.path else ""
    language = suffix if _FENCE_LANGUAGE.fullmatch(suffix) else ""
    return [f"```{language}", *shown, "```"]


def symbol_lines(context: CodebaseContext | None) -> list[str]:
    """The definitions the question points at, one line each, best first."""
    if context is None or not context.symbols:
        return []
    found = [
        f"- `{item.name}` ({item.kind}) {item.file}:{item.line}-{item.end_line}"
        for item in context.symbols[:EXCERPT_SYMBOLS]  # a slice: no record made of the rest
    ]
    return ["", "Symbols found:", *found]


def local_answer(
    intro: str,
    evidence: Evidence,
    command: CommandReport | None,
    question: str = "",
    *,
    closing: str = "",
) -> str:
    """A readable answer without a model: ``intro``, the command output, the sources (the
    first few with the lines that best match ``question``), images, then ``closing`` (what
    to do next)."""
    lines = [intro]
    if command is not None:
        lines += ["", f"Command {command.command or command.id}:"]
        if command.error is not None:
            lines.append(f"failed: {command.error}")
        lines += [response.plain_text() for response in command.responses]
    if evidence.sources:
        lines += ["", "Most relevant repository sources:"]
        for number, source in enumerate(evidence.sources):
            heading = f" ({source.heading})" if source.heading else ""
            lines.append(f"- {source.path}:{source.start}-{source.end}{heading}")
            if question and number < EXCERPT_SOURCES:
                lines += ["", *excerpt(source, question), ""]  # a block of its own: Markdown
        lines += symbol_lines(evidence.context)
    else:
        lines += ["", "No repository source matched the question."]
    if evidence.elsewhere:
        lines += ["", "In other repositories:"]
        for item in evidence.elsewhere:
            heading = f" ({item.source.heading})" if item.source.heading else ""
            lines.append(f"- {item.cited}{heading}")
    if evidence.images:
        lines += ["", "Matching images:", *(f"- {image.path}" for image in evidence.images)]
    if closing:
        lines += ["", closing]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Found:
    """What every answer carries: the redacted sources, the images and the command run."""

    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    command: CommandReport | None
    elsewhere: tuple[MergedSource, ...] = ()

    def answer(
        self, outcome: Outcome, text: str, recorder: ActivityRecorder, **rest: Any
    ) -> Answer:
        """The result of ``outcome`` with ``text`` as its answer."""
        return Answer(
            outcome=outcome,
            answer=text,
            sources=self.sources,
            images=self.images,
            command=self.command,
            activities=tuple(recorder.activities),
            elsewhere=self.elsewhere,
            **rest,
        )
