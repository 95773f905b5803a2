"""Making tool output and logged arguments safe to hand to a model or write to a log.

* Values under sensitive keys are replaced with ``[REDACTED]``: keys naming authorization,
  cookies, passwords, secrets, tokens, API keys, private keys, credentials, or the
  environment (``env``). Numbers, booleans and null under such keys are kept: they are
  counts and flags (``maxTokens``), not secret material.
* Strings go through ``szrag.base.redact``: Slack, GitHub, OpenAI, AWS and other key formats,
  PEM private keys, bearer credentials, passwords in URLs and ``key=value`` assignments
  become ``[REDACTED:kind]``; then any inline ``password=...``, ``token: ...``,
  ``api_key=...`` left in running text loses its value.
* ``telemetryHistory`` is left out, nesting deeper than MAX_DEPTH is cut, containers keep
  their first MAX_ITEMS items and long strings are shortened.
* Anything that is not JSON (paths, dates, bytes, sets, exceptions) is turned into JSON
  values, so the result always serialises; a record (a dataclass) shows its public fields
  (``szrag.base.public.public_fields``: camelCase names).

This is a heuristic: it cannot promise that a secret in an unexpected shape is caught.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from szrag.base.public import public_fields
from szrag.base.redact import REDACTED, is_sensitive_key, key_words, redact, redact_prose

__all__ = ["REDACTED", "is_sensitive_key", "sanitise", "sanitise_text"]

MAX_DEPTH = 8
MAX_ITEMS = 500
MAX_STRING_CHARS = 16 * 1024
DEPTH_MARKER = "[MAX DEPTH]"

OMITTED_KEYS = frozenset({"telemetryhistory"})


def _is_omitted(key: str) -> bool:
    return "".join(key_words(key)) in OMITTED_KEYS


def sanitise_text(text: str, max_chars: int = MAX_STRING_CHARS) -> str:
    """A string with secrets redacted, lone surrogates replaced and length bounded."""
    if len(text) > max_chars:
        text = f"{text[:max_chars]}… [{len(text) - max_chars} more characters]"
    text = text.encode("utf-8", "replace").decode("utf-8")
    return redact_prose(redact(text))


def _scalar(value: Any) -> tuple[bool, Any]:
    """(True, JSON value) for scalars and simple objects; (False, None) for containers."""
    if value is None or isinstance(value, bool | int):
        return True, value
    if isinstance(value, float):
        return True, value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return True, sanitise_text(value)
    if isinstance(value, enum.Enum):
        return _scalar(value.value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return True, value.isoformat()
    if isinstance(value, PurePath):
        return True, sanitise_text(str(value))
    if isinstance(value, bytes | bytearray):
        return True, f"<{len(value)} bytes>"
    if isinstance(value, BaseException):
        return True, {"type": type(value).__name__, "message": sanitise_text(str(value))}
    return False, None


def _as_container(value: Any) -> Any:
    if isinstance(value, type):
        return value
    if dataclasses.is_dataclass(value) or hasattr(type(value), "public_view"):
        return public_fields(value)
    to_dict = getattr(value, "to_dict", None)  # another library's record
    if callable(to_dict):
        return to_dict()
    return value


def _walk(value: Any, depth: int) -> Any:
    done, result = _scalar(value)
    if done:
        return result
    if depth >= MAX_DEPTH:
        return DEPTH_MARKER
    value = _as_container(value)
    if isinstance(value, Mapping):
        clean: dict[str, Any] = {}
        for index, (raw_key, item) in enumerate(value.items()):
            if index >= MAX_ITEMS:
                clean["…"] = f"{len(value) - MAX_ITEMS} more entries"
                break
            key = str(raw_key)
            if _is_omitted(key):
                continue
            if is_sensitive_key(key) and not (item is None or isinstance(item, bool | int | float)):
                clean[key] = REDACTED
            else:
                clean[key] = _walk(item, depth + 1)
        return clean
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else list(value)
        clean_items = [_walk(item, depth + 1) for item in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            clean_items.append(f"… {len(items) - MAX_ITEMS} more items")
        return clean_items
    done, result = _scalar(value)
    if done:  # to_dict() gave a scalar
        return result
    return sanitise_text(repr(value), 500)


def sanitise(value: Any) -> Any:
    """A JSON-ready copy of ``value`` with secrets redacted (see the module docstring)."""
    return _walk(value, 0)
