"""Finding a command in a question: /sz-* names, the hash special case, command orientation."""

from __future__ import annotations

import pytest

from szrag.commands import (
    CommandRegistry,
    Invocation,
    builtin_registry,
    infer_command_invocation,
    is_command_oriented,
    redact_invocation_secrets,
    redact_password_phrases,
)
from szrag.llm.prompts import build_user_message


@pytest.fixture
def registry() -> CommandRegistry:
    """The built-in commands, in a registry no other test shares."""
    return builtin_registry()


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("/sz-calc 2 + 2", Invocation("calc", "2 + 2", False)),
        ("please run /sz-calc 2+2?", Invocation("calc", "2+2", True)),
        ("can you run the /sz-ping command?", Invocation("ping", "", True)),
        ("run /sz-echo command hello there", Invocation("echo", "hello there", True)),
        ("Use `/sz-base64 encode hi` for me", Invocation("base64", "encode hi", True)),
        ("what does /SZ-UUID do", Invocation("uuid", "do", False)),
        ("/sz-nothing here, but /sz-roll 2d6", Invocation("roll", "2d6", False)),
        ("/sz-ask about /sz-uuid", Invocation("uuid", "", False)),
    ],
)
def test_slash_commands(registry: CommandRegistry, question: str, expected: Invocation) -> None:
    assert infer_command_invocation(question, registry) == expected


@pytest.mark.parametrize(
    "question",
    [
        "how is the index built?",
        "what does /sz-unknown do?",
        "see https://example.com/sz-ping for details",
        "a path like docs/sz-ping.md",
        "how does /sz-ask decide what to answer?",  # never inferred: it would recurse
    ],
)
def test_no_command(registry: CommandRegistry, question: str) -> None:
    assert infer_command_invocation(question, registry) is None


@pytest.mark.parametrize(
    ("question", "text"),
    [
        (
            "/sz-hash the password hunter2 with PBKDF2 and 100000 iterations using sha256",
            "pbkdf2 sha256 100000 hunter2",
        ),
        # The digest defaults to sha512, as in the spec.
        ("run /sz-hash on the password hunter2 with 1000 iterations", "pbkdf2 sha512 1000 hunter2"),
        ("/sz-hash password: s3cret, 100,000 rounds, SHA-1", "pbkdf2 sha1 100000 s3cret"),
        (
            'use /sz-hash: passphrase "correct horse" with iterations of 5000 and salt NaCl',
            "pbkdf2 sha512 5000 'correct horse' NaCl",
        ),
        (
            "/sz-hash derive a key from password=p@ss! with sha3-256 and 2k iterations",
            "pbkdf2 sha3-256 2k 'p@ss!'",
        ),
    ],
)
def test_hash_special_case(registry: CommandRegistry, question: str, text: str) -> None:
    invocation = infer_command_invocation(question, registry)
    assert invocation is not None
    assert (invocation.id, invocation.text) == ("hash", text)


def test_hash_prose_without_a_password_value_is_not_a_command(registry: CommandRegistry) -> None:
    question = "how does the code hash the password with 100000 iterations?"
    assert infer_command_invocation(question, registry) is None


@pytest.mark.parametrize(
    "question",
    [
        "How does auth.js hash the password argument with 100000 iterations?",
        "hash the password hunter2 with PBKDF2 and 100000 iterations using sha256",
        "does /sz-calc hash the password hunter2 with 1000 iterations?",
    ],
)
def test_hash_case_needs_the_slash_hash_mention(registry: CommandRegistry, question: str) -> None:
    invocation = infer_command_invocation(question, registry)
    assert invocation is None or invocation.id != "hash"


def test_slash_hash_without_password_uses_the_plain_text(registry: CommandRegistry) -> None:
    invocation = infer_command_invocation("/sz-hash sha256 hello", registry)
    assert invocation == Invocation("hash", "sha256 hello", False)


def test_hash_case_needs_a_registered_hash_command() -> None:
    question = "/sz-hash the password hunter2 with 1000 iterations"
    assert infer_command_invocation(question, CommandRegistry()) is None


@pytest.mark.parametrize(
    ("question", "oriented"),
    [
        ("run the ping command", True),
        ("Please execute /sz-uuid", True),
        ("can you invoke the hash command for me", True),
        ("I want to use /sz-calc", True),
        ("call the release command", True),
        ("how are commands registered?", False),
        ("run the tests", False),
        ("which module uses the index?", False),
    ],
)
def test_command_oriented(question: str, oriented: bool) -> None:
    assert is_command_oriented(question) is oriented


@pytest.mark.parametrize(
    ("question", "redacted"),
    [
        (
            "/sz-hash the password hunter2 with 1000 iterations, is hunter2 strong?",
            "/sz-hash the password [REDACTED:password] with 1000 iterations, "
            "is [REDACTED:password] strong?",
        ),
        (
            '/sz-hash passphrase "correct horse" with 5000 rounds and salt NaCl',
            '/sz-hash passphrase "[REDACTED:password]" with 5000 rounds and salt NaCl',
        ),
        # A sensitive command's own input is withheld too.
        ("run /sz-hash sha256 hunter2?", "run /sz-hash [REDACTED:command input]?"),
    ],
)
def test_secrets_taken_from_a_question_are_redacted(
    registry: CommandRegistry, question: str, redacted: str
) -> None:
    invocation = infer_command_invocation(question, registry)
    clean = redact_invocation_secrets(question, invocation)
    assert clean == redacted
    message = build_user_message(clean, repository_context="")
    assert "hunter2" not in message and "correct horse" not in message


@pytest.mark.parametrize(
    "question",
    [
        "How does auth.js hash the password argument with 100000 iterations?",
        "run /sz-calc 2+2",
        "what does password reset do?",
    ],
)
def test_questions_without_a_secret_are_unchanged(registry: CommandRegistry, question: str) -> None:
    invocation = infer_command_invocation(question, registry)
    assert redact_invocation_secrets(question, invocation) == question


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hash the password hunter2.", "hash the password [REDACTED:password]."),
        ("passphrase: 'a b'", "passphrase: '[REDACTED:password]'"),
        ("hash the password with 10 rounds", "hash the password with 10 rounds"),
    ],
)
def test_password_phrases(text: str, expected: str) -> None:
    assert redact_password_phrases(text) == expected
