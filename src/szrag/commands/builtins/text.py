"""count, case and base64."""

from __future__ import annotations

import base64
import binascii
import re

from szrag.commands.errors import CommandInputError
from szrag.commands.model import CommandContext, CommandSpec

CASE_STYLES = ("camel", "pascal", "snake", "kebab")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\W_]+")


def split_words(text: str) -> list[str]:
    """Words of an identifier or phrase: ``HTTPServer_error-code`` -> HTTP, Server, error, code."""
    words: list[str] = []
    for piece in _SEPARATORS.split(text):
        words.extend(part for part in _CAMEL_BOUNDARY.split(piece) if part)
    return words


def convert_case(text: str, style: str) -> str:
    """``text`` written in camel, pascal, snake or kebab case."""
    words = [word.lower() for word in split_words(text)]
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "pascal":
        return "".join(word[:1].upper() + word[1:] for word in words)
    if style == "camel":
        head, *rest = words or [""]
        return head + "".join(word[:1].upper() + word[1:] for word in rest)
    raise CommandInputError(f"unknown case {style!r}; use one of {', '.join(CASE_STYLES)}")


async def case(context: CommandContext) -> None:
    """Convert text to one case, or show all four."""
    style, _, rest = context.text.partition(" ")
    style = style.lower()
    if style in CASE_STYLES:
        if not rest.strip() or not split_words(rest):
            raise CommandInputError(
                f"case {style} needs some text, e.g. /sz-case {style} hello world"
            )
        context.respond(convert_case(rest, style))
        return
    if not context.text or not split_words(context.text):
        raise CommandInputError("usage: /sz-case camel|pascal|snake|kebab TEXT")
    context.respond(
        "\n".join(f"{name}: {convert_case(context.text, name)}" for name in CASE_STYLES)
    )


async def count(context: CommandContext) -> None:
    """Characters, words, lines and UTF-8 bytes of the text."""
    text = context.text
    if not text:
        raise CommandInputError("count needs some text, e.g. /sz-count hello world")
    context.respond(
        f"characters: {len(text)}, words: {len(text.split())}, "
        f"lines: {len(text.splitlines())}, bytes: {len(text.encode('utf-8'))}"
    )


def decode_base64(data: str) -> bytes:
    """Standard or URL-safe Base64, padding optional; anything else is refused."""
    compact = "".join(data.split())
    padded = compact + "=" * (-len(compact) % 4)
    try:
        if "-" in compact or "_" in compact:
            return base64.b64decode(padded, altchars=b"-_", validate=True)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise CommandInputError("that is not valid Base64") from None


async def base64_command(context: CommandContext) -> None:
    """Encode text (the default) or decode Base64."""
    mode, _, rest = context.text.partition(" ")
    if mode.lower() not in ("encode", "decode"):
        mode, rest = "encode", context.text
    if not rest.strip():
        raise CommandInputError("usage: /sz-base64 encode|decode TEXT")
    if mode.lower() == "encode":
        context.respond(base64.b64encode(rest.encode("utf-8")).decode("ascii"))
        return
    raw = decode_base64(rest)
    try:
        context.respond(raw.decode("utf-8"))
    except UnicodeDecodeError:
        context.respond(f"(binary, {len(raw)} bytes) hex: {raw.hex()}")


COMMANDS = (
    CommandSpec(
        "count",
        "Count characters, words, lines and bytes.",
        count,
        category="text",
        usage="/sz-count TEXT",
    ),
    CommandSpec(
        "case",
        "Convert text to camelCase, PascalCase, snake_case or kebab-case.",
        case,
        category="text",
        usage="/sz-case [camel|pascal|snake|kebab] TEXT",
    ),
    CommandSpec(
        "base64",
        "Encode text as Base64 or decode it.",
        base64_command,
        category="text",
        usage="/sz-base64 [encode|decode] TEXT",
    ),
)
