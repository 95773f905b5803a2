"""A small validator for the JSON Schema subset the tool definitions use.

Supported: ``type`` (object, string, integer, number, boolean, array), ``properties``,
``required``, ``additionalProperties: false``, ``enum``, ``minLength``, ``maxLength``,
``minimum``, ``maximum``, ``pattern`` and ``items``. Messages name the field and say what
was expected, so a model can correct its call.

JSON does not tell ``2`` from ``2.0``, and models send either. An integer-valued float where
the schema wants an integer is accepted and replaced *in place* by its ``int`` (inside the
objects and arrays given), so a handler that slices or counts with it gets an ``int``;
``2.5`` is refused.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False  # True is an int to Python, not to JSON
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _label(path: str) -> str:
    return path or "arguments"


def _as_schema_value(schema: dict[str, Any], value: Any) -> Any:
    """``value`` as the handler should see it: an integer-valued float as an int."""
    if schema.get("type") == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def validate(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema``; empty when it conforms.

    Integer-valued floats under integer fields of ``value`` are turned into ints in place."""
    expected = schema.get("type")
    if isinstance(expected, str) and not _is_type(value, expected):
        if expected == "integer" and isinstance(value, float):
            return [f"{_label(path)}: expected an integer, got {value!r}"]
        article = "an" if expected[0] in "aeiou" else "a"
        return [f"{_label(path)}: expected {article} {expected}, got {type(value).__name__}"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(item) for item in schema["enum"])
        errors.append(f"{_label(path)}: must be one of {allowed}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{_label(path)}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{_label(path)}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{_label(path)}: does not match {schema['pattern']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{_label(path)}: must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{_label(path)}: must be at most {schema['maximum']}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            errors.extend(validate(schema["items"], item, f"{path}[{index}]"))
            value[index] = _as_schema_value(schema["items"], item)
    if isinstance(value, dict):
        errors.extend(_validate_object(schema, value, path))
    return errors


def _validate_object(schema: dict[str, Any], value: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            errors.append(f"{_label(path)}: missing required field {name!r}")
    if schema.get("additionalProperties") is False:
        extra = sorted(set(value) - set(properties))
        if extra:
            allowed = ", ".join(sorted(properties)) or "none"
            names = ", ".join(repr(name) for name in extra)
            errors.append(f"{_label(path)}: undeclared field {names} (allowed: {allowed})")
    for name, item in value.items():
        if name in properties:
            errors.extend(validate(properties[name], item, f"{path}.{name}" if path else name))
            value[name] = _as_schema_value(properties[name], item)
    return errors


# --- building schemas -------------------------------------------------------------------------


def object_schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A strict object of ``properties``: no other key allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def text_schema(description: str, max_length: int = 500) -> dict[str, Any]:
    """A non-empty string of at most ``max_length`` characters."""
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


def count_schema(default: int, maximum: int, description: str) -> dict[str, Any]:
    """A count from 1 to ``maximum``."""
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "default": default,
        "description": description,
    }
