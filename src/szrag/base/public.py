"""The one serialisation boundary of public JSON: what a user sees in every ``--json`` output,
the HTTP API, SSE events and tool results.

One casing: camelCase field names (the spec's public shapes: ``relativePath``,
``responseRounds``). A record's fields are named in Python style and renamed here; the keys of
a mapping are data (paths in ``scores``, metric names, a tool's arguments) and are left as
they are. One timestamp form: ISO 8601 in UTC with milliseconds and ``Z``
(:func:`utc_timestamp`). ``path`` is always a file's path relative to the repository root.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

_UNDERSCORED = re.compile(r"_([a-z0-9])")


def camel(name: str) -> str:
    """``end_line`` -> ``endLine``; a name without underscores is returned as it is."""
    return _UNDERSCORED.sub(lambda match: match.group(1).upper(), name.strip("_"))


def public(value: Any) -> Any:
    """``value`` as plain JSON values: a record's own ``to_dict()`` when it has one, else its
    fields under camelCase names; sequences as lists, sets sorted, paths as POSIX strings,
    datetimes as UTC timestamps. Mapping keys are data and stay as given."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return public(to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {shown: public(getattr(value, name)) for shown, name in _fields(type(value))}
    if isinstance(value, Mapping):
        return {str(key): public(item) for key, item in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(public(item) for item in value)
    if isinstance(value, list | tuple) or (
        isinstance(value, Sequence) and not isinstance(value, bytes | bytearray | memoryview)
    ):  # a str was returned first
        return [public(item) for item in value]
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, datetime):
        return utc_timestamp(value)
    if isinstance(value, Enum):
        return public(value.value)
    return str(value)


@functools.cache
def _fields(record: type) -> tuple[tuple[str, str], ...]:
    """A record type's shown fields: (public name, field name), worked out once per type."""
    return tuple((camel(item.name), item.name) for item in dataclasses.fields(record) if item.repr)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``value`` as public JSON text (UTF-8 characters kept)."""
    return json.dumps(public(value), indent=indent, ensure_ascii=False)


def utc_timestamp(moment: datetime | float | None = None) -> str:
    """The one public timestamp form, ``2026-12-01T11:36:23.266Z``: of a datetime (naive
    means UTC), of epoch seconds, or now when omitted."""
    if moment is None:
        moment = datetime.now(UTC)
    elif isinstance(moment, int | float):
        moment = datetime.fromtimestamp(moment, UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def public_timestamp(text: object) -> str | None:
    """An ISO 8601 text in any offset (older indexes wrote ``+00:00``) in the public form;
    None for anything that is no timestamp."""
    if not isinstance(text, str):
        return None
    try:
        return utc_timestamp(datetime.fromisoformat(text.strip().replace("Z", "+00:00")))
    except ValueError:
        return None
