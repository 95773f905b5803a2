"""Sanitising tool output: sensitive keys, secrets in strings, omitted and deep values."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from szrag.tools.sanitise import (
    DEPTH_MARKER,
    MAX_DEPTH,
    REDACTED,
    is_sensitive_key,
    sanitise,
    sanitise_text,
)

# Built from pieces so that no complete credential sits in the source.
SLACK = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OPENAI = "sk-" + "proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)
BEARER = "Bearer " + "eyJhbGciOiJIUzI1NiJ9" + "abcDEF123456"


@pytest.mark.parametrize(
    "key",
    [
        "authorization",
        "Authorization",
        "cookie",
        "Set-Cookie",
        "password",
        "dbPassword",
        "client_secret",
        "token",
        "slackBotToken",
        "apiKey",
        "x-api-key",
        "API_KEY",
        "privateKey",
        "private_key_pem",
        "env",
        "processEnv",
        "environment",
        "AWS_SECRET_ACCESS_KEY",
        "credentials",
        "DB_PASS",  # szrag.base.redact's vocabulary
        "smtpPass",
    ],
)
def test_sensitive_keys(key: str) -> None:
    assert is_sensitive_key(key)


@pytest.mark.parametrize(
    "key", ["name", "status", "version", "keyboard", "author", "path", "development"]
)
def test_ordinary_keys(key: str) -> None:
    assert not is_sensitive_key(key)


def test_secrets_of_each_kind_are_redacted_from_nested_output() -> None:
    output = {
        "service": "szrag",
        "config": {
            "authorization": "Basic dXNlcjpwYXNz",
            "apiKey": "plain-value-123",
            "env": {"PATH": "/usr/bin", "HOME": "/root"},
            "maxTokens": 4096,
            "tokenCount": None,
        },
        "events": [
            {"note": f"posted with {SLACK}"},
            {"note": f"cloned using {GITHUB}"},
            [{"deep": f"model key {OPENAI} in use"}],
            {"aws": f"id {AWS_ID} secret aws_secret_access_key={AWS_SECRET}"},
            {"key": PEM},
            {"header": f"Authorization: {BEARER}"},
            {"line": "connect password=hunter2 and retry"},
        ],
        "telemetryHistory": [{"cpu": 1}],
    }
    clean = sanitise(output)
    text = json.dumps(clean)
    for secret in (
        SLACK,
        GITHUB,
        OPENAI,
        AWS_ID,
        AWS_SECRET,
        "MIIEowIBAAKCAQEA",
        "eyJhbGciOiJIUzI1NiJ9abcDEF123456",
        "hunter2",
        "dXNlcjpwYXNz",
        "plain-value-123",
        "/usr/bin",
    ):
        assert secret not in text, secret
    assert clean["config"]["authorization"] == REDACTED
    assert clean["config"]["env"] == REDACTED
    assert clean["config"]["maxTokens"] == 4096  # a count, not a secret
    assert clean["config"]["tokenCount"] is None
    assert "telemetryHistory" not in clean
    assert clean["service"] == "szrag"
    assert "[REDACTED:slack_token]" in clean["events"][0]["note"]
    assert clean["events"][0]["note"].startswith("posted with ")


def test_telemetry_history_is_omitted_in_any_spelling() -> None:
    clean = sanitise({"status": {"telemetry_history": [1], "TelemetryHistory": [2], "ok": True}})
    assert clean == {"status": {"ok": True}}


def test_depth_is_limited() -> None:
    value: dict[str, object] = {"leaf": "x"}
    for _ in range(MAX_DEPTH + 3):
        value = {"child": value}
    clean = sanitise(value)
    for _ in range(MAX_DEPTH):
        clean = clean["child"]
    assert clean == DEPTH_MARKER


def test_cycles_end_at_the_depth_limit() -> None:
    loop: dict[str, object] = {}
    loop["self"] = loop
    assert DEPTH_MARKER in json.dumps(sanitise(loop))


def test_containers_are_capped() -> None:
    clean = sanitise({"items": list(range(600))})
    assert clean["items"][:3] == [0, 1, 2]
    assert clean["items"][-1] == "… 100 more items"


@dataclasses.dataclass
class _Record:
    when: datetime
    where: Path
    blob: bytes
    tags: frozenset[str]
    password: str


def test_non_json_values_become_json() -> None:
    record = _Record(
        datetime(2024, 1, 2, tzinfo=UTC), Path("/srv/app"), b"\x00\x01", frozenset({"b", "a"}), "pw"
    )
    clean = sanitise(
        {"record": record, "error": ValueError("bad"), "nan": float("nan"), "obj": object()}
    )
    assert clean["record"] == {
        "when": "2024-01-02T00:00:00+00:00",
        "where": "/srv/app",
        "blob": "<2 bytes>",
        "tags": ["a", "b"],
        "password": REDACTED,
    }
    assert clean["error"] == {"type": "ValueError", "message": "bad"}
    assert clean["nan"] == "nan"
    assert clean["obj"].startswith("<object object")
    json.dumps(clean)


def test_long_strings_and_lone_surrogates() -> None:
    clean = sanitise({"text": "a" * 20000, "odd": "x\udcffy"})
    assert clean["text"].endswith("… [3616 more characters]")
    assert clean["odd"] == "x?y"
    json.dumps(clean).encode("utf-8")


def test_inline_assignments_use_the_redaction_vocabulary() -> None:
    text = sanitise_text("retrying with DB_PASS=s3cr3t and client-secret: abc, status=ok")
    assert text == "retrying with DB_PASS=[REDACTED] and client-secret: [REDACTED], status=ok"
