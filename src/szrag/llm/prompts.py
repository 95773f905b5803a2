"""The prompts (package data, overridable per repository) and the user message of a question.

``load_prompt("SYSTEM_PROMPT", root)`` reads ``<root>/.rag/prompts/SYSTEM_PROMPT.md`` when that
file exists and is not blank, else the copy shipped in ``szrag/prompts/``. The user message puts
each kind of evidence in its own tagged block, so the model can tell the question from the data.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from szrag.base.errors import ConfigError

log = logging.getLogger("szrag.llm")

SYSTEM_PROMPT = "SYSTEM_PROMPT"
TOOL_CALL_LIMIT_PROMPT = "TOOL-CALL-LIMIT_PROMPT"
CODE_TOOLS_PROMPT = "CODE-TOOLS_PROMPT"  # added to the system prompt where code tools are offered
OVERRIDE_DIRECTORY = Path(".rag") / "prompts"
_NAME = re.compile(r"[A-Z][A-Z0-9_-]*")


def override_path(name: str, root: Path | str) -> Path:
    """Where a repository may put its own version of the prompt ``name``."""
    return Path(root) / OVERRIDE_DIRECTORY / f"{name}.md"


def is_overridden(name: str, root: Path | str) -> bool:
    """Whether the repository at ``root`` has its own version of the prompt ``name``."""
    path = override_path(name, root)
    try:
        return path.is_file() and bool(path.read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return True  # load_prompt says what is wrong with it


def load_prompt(name: str, root: Path | str | None = None) -> str:
    """The text of prompt ``name``: the repository's override when present, else the shipped one."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a prompt name: {name!r}")
    if root is not None:
        path = override_path(name, root)
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigError(f"cannot read the prompt override {path}: {error}") from None
            if text.strip():
                return text.strip()
            log.warning("ignoring the blank prompt override %s", path)
    shipped = resources.files("szrag").joinpath("prompts", f"{name}.md")
    if not shipped.is_file():
        raise ValueError(f"no prompt named {name!r}")
    return shipped.read_text(encoding="utf-8").strip()


def build_user_message(
    question: str,
    *,
    repository_context: str,
    images: Sequence[Mapping[str, Any]] = (),
    command: Mapping[str, Any] | None = None,
    command_input: str | None = None,
    live_evidence: str = "",
    other_repositories: str = "",
) -> str:
    """The question with the packed repository knowledge, image metadata and command result
    (``command_input`` is the text the command was given, left out when it is sensitive),
    and the running application's records that match the code (``live_evidence``); in a service
    of several repositories, other repositories' sources (``other_repositories``, each headed
    ``repository:path:start-end``)."""
    parts = [
        f"<question>\n{question.strip()}\n</question>",
        _block(
            "repository_knowledge",
            repository_context.strip() or "No repository source matched this question.",
        ),
        _block("image_assets", _images_text(images)),
    ]
    if command is not None:
        parts.append(_block("command_result", command_text(command, command_input)))
    if other_repositories:
        parts.append(_block("other_repositories", other_repositories))
    if live_evidence:
        parts.append(_block("live_evidence", live_evidence))
    return "\n\n".join(parts)


def command_text(command: Mapping[str, Any], command_input: str | None = None) -> str:
    """A captured command result as readable text: the command line, then each response."""
    name = command.get("command") or f"/sz-{command.get('id', '?')}"
    line = f"{name} {command_input or ''}".rstrip()
    lines = [f"Command: {line}"]
    if command.get("error"):
        lines.append(f"The command failed: {command['error']}")
    responses = command.get("responses") or []
    if command.get("outputWithheld"):
        lines.append(str(command["outputWithheld"]))
    elif not responses and not command.get("error"):
        lines.append("The command produced no response.")
    for number, response in enumerate(responses, 1):
        lines.append(f"Response {number}:\n{response_text(response)}")
    return "\n".join(lines)


def response_text(response: Any) -> str:
    """One command response as text: a string, the ``text`` of a record, or its JSON."""
    if isinstance(response, str):
        return response
    if isinstance(response, Mapping) and isinstance(response.get("text"), str):
        return str(response["text"])
    return json.dumps(response, ensure_ascii=False, default=str)


def _images_text(images: Sequence[Mapping[str, Any]]) -> str:
    if not images:
        return "No image matched this question."
    return "\n".join(
        f"- {image.get('path')} (url {image.get('url')}, score {image.get('score')})"
        for image in images
    )


def _block(tag: str, body: str) -> str:
    return f"<{tag}>\n{body}\n</{tag}>"
