"""The JSON Schema subset validator."""

from __future__ import annotations

from typing import Any

import pytest

from szrag.tools.schema import validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commandId": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "level": {"type": "string", "enum": ["info", "error"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["commandId"],
    "additionalProperties": False,
}


def test_valid_arguments() -> None:
    value = {
        "commandId": "ping",
        "limit": 3,
        "ratio": 0.5,
        "flag": True,
        "level": "info",
        "tags": ["a"],
    }
    assert validate(SCHEMA, value) == []
    assert validate(SCHEMA, {"commandId": "ping", "limit": 3.0}) == []  # 3.0 is an integer in JSON


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "arguments: expected an object, got list"),
        ({}, "arguments: missing required field 'commandId'"),
        (
            {"commandId": "ping", "extra": 1},
            "arguments: undeclared field 'extra' (allowed: commandId, flag, level, limit, ratio, tags)",
        ),
        ({"commandId": ""}, "commandId: shorter than 1 characters"),
        ({"commandId": "toolong"}, "commandId: longer than 5 characters"),
        ({"commandId": "PING"}, "commandId: does not match ^[a-z]+$"),
        ({"commandId": 5}, "commandId: expected a string, got int"),
        ({"commandId": "a", "limit": 0}, "limit: must be at least 1"),
        ({"commandId": "a", "limit": 11}, "limit: must be at most 10"),
        ({"commandId": "a", "limit": True}, "limit: expected an integer, got bool"),
        ({"commandId": "a", "limit": 2.5}, "limit: expected an integer, got 2.5"),
        ({"commandId": "a", "limit": float("inf")}, "limit: expected an integer, got inf"),
        ({"commandId": "a", "ratio": "1"}, "ratio: expected a number, got str"),
        ({"commandId": "a", "flag": 1}, "flag: expected a boolean, got int"),
        ({"commandId": "a", "level": "debug"}, "level: must be one of 'info', 'error'"),
        ({"commandId": "a", "tags": ["x", 2]}, "tags[1]: expected a string, got int"),
    ],
)
def test_each_violation_is_named(value: Any, message: str) -> None:
    assert message in validate(SCHEMA, value)


def test_integer_valued_floats_become_ints_in_place() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer"},
            "ratio": {"type": "number"},
            "ids": {"type": "array", "items": {"type": "integer"}},
        },
    }
    value: dict[str, Any] = {"limit": 2.0, "ratio": 2.0, "ids": [1.0, 3]}
    assert validate(schema, value) == []
    assert value == {"limit": 2, "ratio": 2.0, "ids": [1, 3]}
    assert type(value["limit"]) is int and type(value["ids"][0]) is int
    assert type(value["ratio"]) is float  # a number stays what it was
    assert ["a", "b", "c"][: value["limit"]] == ["a", "b"]  # the crash this prevents


def test_several_violations_are_all_reported() -> None:
    errors = validate(SCHEMA, {"limit": 0, "x": 1})
    assert len(errors) == 3
