"""The one serialisation boundary of public JSON: what a user sees in every ``--json`` output,
the HTTP API, SSE events, tool results and the audit log.

Records carry snake_case fields; :func:`to_public` turns any of them into JSON-ready data,
each field under its camelCase name (``relative_path`` -> ``relativePath``), nested records,
sequences, enums, paths and datetimes included. No module writes a public field name by hand
(``tests/test_architecture.py`` holds it). Where a record's public form departs from its
fields, the field says so in its metadata (:func:`public`)::

    answer_id: str | None = field(default=None, metadata=public(omit_none=True))
    body: str = field(metadata=public(name="notes"))
    started_at: float = field(metadata=public(convert=utc_timestamp))

A record whose fields are shown in another order than they are declared (a record built
with positional arguments) lists them in a ``public_order`` class variable; one whose public
shape is a projection (an answer's shape follows its outcome) names it in a ``public_view()``
method returning another record (or plain data) to show instead.

The keys of a mapping are data (paths in ``scores``, metric names, a tool's arguments) and are
left as they are, unless the field holding it says they are field names
(``public(camel_keys=True)``: an activity's metadata). One timestamp form: ISO 8601 in UTC with
milliseconds and ``Z`` (:func:`utc_timestamp`). ``path`` is always a file's path relative to
the repository root.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

_UNDERSCORED = re.compile(r"_([a-z0-9])")
_METADATA_KEY = "szrag.base.public"


def camel(name: str) -> str:
    """``end_line`` -> ``endLine``; a name without underscores is returned as it is."""
    return _UNDERSCORED.sub(lambda match: match.group(1).upper(), name.strip("_"))


@dataclass(frozen=True, slots=True)
class Shown:
    """How one field of a record is shown (see :func:`public`)."""

    name: str | None = None
    omit_none: bool = False
    omit_empty: bool = False
    hidden: bool = False
    convert: Callable[[Any], Any] | None = None
    camel_keys: bool = False
    spread: bool = False


_PLAIN = Shown()


def public(
    *,
    name: str | None = None,
    omit_none: bool = False,
    omit_empty: bool = False,
    hidden: bool = False,
    convert: Callable[[Any], Any] | None = None,
    camel_keys: bool = False,
    spread: bool = False,
) -> dict[str, Shown]:
    """Field metadata saying how :func:`to_public` shows the field:

    * ``name``: the public name, when it is not the field's camelCase form;
    * ``omit_none``: left out when None; ``omit_empty``: left out when falsy (None, empty,
      zero);
    * ``hidden``: never shown (as a field with ``repr=False``: a handler, an exception);
    * ``convert``: the shown value made from the field's value (epoch seconds to a
      timestamp, a rounding);
    * ``camel_keys``: a mapping whose top-level keys are field names, camelCased;
    * ``spread``: a mapping (its keys are data: an application's own JSON, the index's row
      counts) or a record whose public items are shown in the record itself, in its place.
    """
    return {_METADATA_KEY: Shown(name, omit_none, omit_empty, hidden, convert, camel_keys, spread)}


def rounded(digits: int) -> Callable[[float], float]:
    """A converter rounding a number to ``digits`` decimals."""
    return functools.partial(_round, digits=digits)


def _round(value: float, digits: int) -> float:
    return round(value, digits)


def to_public(value: Any) -> Any:
    """``value`` as plain JSON values: a record's fields under their public names (its
    ``public_view()`` when it has one), sequences as lists, sets sorted, paths as POSIX
    strings, datetimes as UTC timestamps, enums as their values. Mapping keys are data and
    stay as given."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, type):
        return str(value)
    view = getattr(type(value), "public_view", None)
    if view is not None:
        return to_public(view(value))
    if dataclasses.is_dataclass(value):
        return _record(value)
    if isinstance(value, Mapping):
        return {str(key): to_public(item) for key, item in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(to_public(item) for item in value)
    if isinstance(value, list | tuple) or (
        isinstance(value, Sequence) and not isinstance(value, bytes | bytearray | memoryview)
    ):  # a str was returned first
        return [to_public(item) for item in value]
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, datetime):
        return utc_timestamp(value)
    if isinstance(value, Enum):
        return to_public(value.value)
    return str(value)


def public_dict(record: Any) -> dict[str, Any]:
    """:func:`to_public` of a record, which must show as a JSON object."""
    shown = to_public(record)
    if not isinstance(shown, dict):
        raise TypeError(f"{type(record).__name__} does not show as a JSON object")
    return shown


def public_fields(record: Any) -> dict[str, Any]:
    """One level of a record's public form: its shown fields under their public names, the
    values as they are (for a walker of its own, such as the tool sanitiser)."""
    view = getattr(type(record), "public_view", None)
    if view is not None:
        record = view(record)
    if not dataclasses.is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"{type(record).__name__} is not a record")
    return _record(record, _as_is)


def _as_is(value: Any) -> Any:
    return value


def _record(record: Any, each: Callable[[Any], Any] = to_public) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    kind: type = type(record)
    for name, attribute, how in _fields(kind):
        value = getattr(record, attribute)
        if (how.omit_none and value is None) or (how.omit_empty and not value):
            continue
        if how.convert is not None:
            value = how.convert(value)
        if how.spread:
            inner = value if isinstance(value, Mapping) else public_fields(value)
            shown.update((str(key), each(item)) for key, item in inner.items())
        elif how.camel_keys and isinstance(value, Mapping):
            shown[name] = {camel(str(key)): each(item) for key, item in value.items()}
        else:
            shown[name] = each(value)
    return shown


@functools.cache
def _fields(record: type) -> tuple[tuple[str, str, Shown], ...]:
    """A record type's shown fields: (public name, field name, how), worked out once per type."""
    found = []
    for item in dataclasses.fields(record):
        how = item.metadata.get(_METADATA_KEY, _PLAIN)
        if how.hidden or not item.repr:
            continue
        found.append((how.name or camel(item.name), item.name, how))
    order: Sequence[str] = getattr(record, "public_order", ())
    if order:
        place = {name: number for number, name in enumerate(order)}
        found.sort(key=lambda shown: place.get(shown[1], len(place)))
    return tuple(found)


def json_bytes(value: Any) -> bytes:
    """``value``, already public (``to_public``), as compact JSON in UTF-8."""
    import orjson  # the server's: a keyless answer encodes in a twentieth of the time

    return orjson.dumps(value)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``value`` as public JSON text (UTF-8 characters kept)."""
    return json.dumps(to_public(value), indent=indent, ensure_ascii=False)


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
