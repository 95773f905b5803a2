"""A small validator for the JSON Schema subset the tool definitions use.

Supported: ``type`` (object, string, integer, number, boolean, array), ``properties``,
``required``, ``additionalProperties: false``, ``enum``, ``minLength``, ``maxLength``,
``minimum``, ``maximum``, ``pattern`` and ``items``. Messages name the field and say what
was expected, so a model can correct its call.
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


def validate(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema``; empty when it conforms."""
    expected = schema.get("type")
    if isinstance(expected, str) and not _is_type(value, expected):
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
    return errors
