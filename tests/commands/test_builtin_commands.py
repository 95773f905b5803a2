"""Every built-in command, run through the runner with real input."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from szrag.base.settings import Settings
from szrag.commands import (
    SAFE_BUILTINS,
    CommandFailed,
    CommandInputError,
    CommandRegistry,
    CommandRunner,
    UnknownCommand,
    builtin_registry,
    infer_command_invocation,
)
from szrag.commands.builtins.maths import convert_time
from szrag.commands.builtins.text import convert_case, split_words
from szrag.commands.hashing import MAX_ITERATIONS
from szrag.llm.testing import ScriptedProvider, text_reply

RunText = Callable[..., Awaitable[str]]


@pytest.fixture
def registry() -> CommandRegistry:
    """The built-in commands, in a registry no other test shares."""
    return builtin_registry()


@pytest.fixture
def run_text(registry: CommandRegistry, tmp_path: Path) -> RunText:
    """Run a built-in with a repository root in tmp_path and return its responses' text."""

    async def run(command_id: str, text: str = "", *, root: Path | None = None) -> str:
        runner = CommandRunner(registry=registry, root=root or tmp_path)
        result = await runner.run(command_id, text)
        return result.text

    return run


def test_every_builtin_is_registered(registry: CommandRegistry) -> None:
    assert set(registry.ids()) == SAFE_BUILTINS | {"ask"}
    for spec in registry:
        assert spec.description and spec.usage.startswith(spec.name)


async def test_ping(run_text: RunText) -> None:
    assert await run_text("ping") == "pong"


async def test_help_lists_every_command(run_text: RunText, registry: CommandRegistry) -> None:
    text = await run_text("help")
    assert text.startswith(f"{len(registry)} commands:")
    for spec in registry:
        assert f"{spec.name}: {spec.description}" in text


async def test_help_describes_one_command(run_text: RunText) -> None:
    text = await run_text("help", "/sz-roll")
    assert text.splitlines()[0] == "/sz-roll: Roll dice in dice notation, e.g. 2d6+3."
    assert "usage: /sz-roll [NdM+K]" in text
    with pytest.raises(UnknownCommand):
        await run_text("help", "nothing")


async def test_echo(run_text: RunText) -> None:
    assert await run_text("echo", "hello   world") == "hello   world"
    with pytest.raises(CommandInputError, match="echo needs some text"):
        await run_text("echo")


# hash ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "hashlib_name"),
    [
        ("md5", "md5"),
        ("sha1", "sha1"),
        ("SHA-256", "sha256"),
        ("sha512", "sha512"),
        ("sha3", "sha3_256"),
        ("sha3-512", "sha3_512"),
        ("blake2", "blake2b"),
        ("blake2s", "blake2s"),
    ],
)
async def test_hash_digests(run_text: RunText, typed: str, hashlib_name: str) -> None:
    expected = hashlib.new(hashlib_name, b"hello world").hexdigest()
    text = await run_text("hash", f"{typed} hello world")
    assert text == f"{hashlib_name.replace('_', '-')}: {expected}"


async def test_hash_without_an_algorithm_uses_sha256(run_text: RunText) -> None:
    assert await run_text("hash", "hello") == f"sha256: {hashlib.sha256(b'hello').hexdigest()}"


async def test_hash_rand(run_text: RunText) -> None:
    first = await run_text("hash", "rand 16")
    second = await run_text("hash", "rand 16")
    assert re.fullmatch(r"random \(16 bytes\): [0-9a-f]{32}", first)
    assert first != second
    assert re.fullmatch(r"random \(32 bytes\): [0-9a-f]{64}", await run_text("hash", "rand"))
    with pytest.raises(CommandInputError, match="1 to 1024"):
        await run_text("hash", "rand 5000")


def _pbkdf2_fields(text: str) -> dict[str, str]:
    lines = text.splitlines()
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return {"title": lines[0], **fields}


async def test_hash_pbkdf2_with_a_random_salt_matches_hashlib(run_text: RunText) -> None:
    fields = _pbkdf2_fields(await run_text("hash", "pbkdf2 sha256 100000 hunter2"))
    assert fields["title"] == "PBKDF2-HMAC-SHA256, 100000 iterations"
    salt = bytes.fromhex(fields["salt (random, hex)"])
    assert len(salt) == 16
    expected = hashlib.pbkdf2_hmac("sha256", b"hunter2", salt, 100000)
    assert fields["derived key (hex)"] == expected.hex()


async def test_hash_pbkdf2_with_a_given_salt_and_quoted_password(run_text: RunText) -> None:
    fields = _pbkdf2_fields(await run_text("hash", "pbkdf2 sha512 1000 'correct horse' NaCl"))
    assert fields["salt (UTF-8 text, hex)"] == b"NaCl".hex()
    expected = hashlib.pbkdf2_hmac("sha512", b"correct horse", b"NaCl", 1000)
    assert fields["derived key (hex)"] == expected.hex()


async def test_hash_pbkdf2_refuses_bad_input(run_text: RunText) -> None:
    with pytest.raises(CommandInputError, match=r"1,000,001 iterations is more than the 1,000,000"):
        await run_text("hash", f"pbkdf2 sha256 {MAX_ITERATIONS + 1} hunter2")
    with pytest.raises(CommandInputError, match="not supported"):
        await run_text("hash", "pbkdf2 md5 1000 hunter2")
    with pytest.raises(CommandInputError, match="whole number"):
        await run_text("hash", "pbkdf2 sha256 many hunter2")
    with pytest.raises(CommandInputError, match="usage"):
        await run_text("hash", "pbkdf2 sha256 1000")


async def test_the_spec_inference_input_gives_the_right_key(
    run_text: RunText, registry: CommandRegistry
) -> None:
    question = "/sz-hash the password hunter2 with PBKDF2 and 100000 iterations using sha256"
    invocation = infer_command_invocation(question, registry)
    assert invocation is not None
    assert (invocation.id, invocation.text) == ("hash", "pbkdf2 sha256 100000 hunter2")
    fields = _pbkdf2_fields(await run_text(invocation.id, invocation.text))
    salt = bytes.fromhex(fields["salt (random, hex)"])
    key = hashlib.pbkdf2_hmac("sha256", b"hunter2", salt, 100000).hex()
    assert fields["derived key (hex)"] == key


# base64, uuid, token ---------------------------------------------------------------------


async def test_base64_round_trip(run_text: RunText) -> None:
    encoded = await run_text("base64", "encode héllo wörld")
    assert encoded == base64.b64encode("héllo wörld".encode()).decode()
    assert await run_text("base64", f"decode {encoded}") == "héllo wörld"
    assert await run_text("base64", "hi") == "aGk="  # encode is the default


async def test_base64_decode_variants_and_errors(run_text: RunText) -> None:
    assert await run_text("base64", "decode aGk") == "hi"  # padding optional
    assert await run_text("base64", "decode _-8") == "(binary, 2 bytes) hex: ffef"  # URL-safe
    with pytest.raises(CommandInputError, match="not valid Base64"):
        await run_text("base64", "decode not*base64")
    with pytest.raises(CommandInputError, match="usage"):
        await run_text("base64", "decode")


async def test_uuid(run_text: RunText) -> None:
    one = uuid.UUID(await run_text("uuid"))
    assert one.version == 4
    many = (await run_text("uuid", "3")).splitlines()
    assert len(set(many)) == 3 and all(uuid.UUID(item).version == 4 for item in many)
    with pytest.raises(CommandInputError):
        await run_text("uuid", "0")


async def test_token(run_text: RunText) -> None:
    assert re.fullmatch(r"[0-9a-f]{32}", await run_text("token"))
    assert re.fullmatch(r"[0-9a-f]{7}", await run_text("token", "7"))
    with pytest.raises(CommandInputError, match="1 to 512"):
        await run_text("token", "1000")
    with pytest.raises(CommandInputError, match="whole number"):
        await run_text("token", "long")


# numbers ---------------------------------------------------------------------------------


async def test_random(run_text: RunText) -> None:
    values = {int(await run_text("random", "1 3")) for _ in range(60)}
    assert values == {1, 2, 3}
    assert 1 <= int(await run_text("random", "5")) <= 5
    assert 1 <= int(await run_text("random")) <= 100
    assert await run_text("random", "-2 -2") == "-2"
    with pytest.raises(CommandInputError, match="above the maximum"):
        await run_text("random", "9 1")
    with pytest.raises(CommandInputError, match="usage"):
        await run_text("random", "one ten")


async def test_roll(run_text: RunText) -> None:
    text = await run_text("roll", "2d6+3")
    match = re.fullmatch(r"2d6\+3: \[(\d), (\d)\] \+ 3 = (\d+)", text)
    assert match is not None
    first, second, total = (int(value) for value in match.groups())
    assert 1 <= first <= 6 and 1 <= second <= 6 and total == first + second + 3
    assert re.fullmatch(r"1d6: \[[1-6]\] = [1-6]", await run_text("roll"))
    assert re.fullmatch(r"1d20: \[(\d+)\] = \1", await run_text("roll", "20"))
    with pytest.raises(CommandInputError, match="2 to 1000 sides"):
        await run_text("roll", "2d1")


async def test_calc(run_text: RunText) -> None:
    assert await run_text("calc", "2 + 3 * 4") == "2 + 3 * 4 = 14"
    assert await run_text("calc", "2^10 / 4") == "2^10 / 4 = 256"
    assert await run_text("calc", "sqrt(2)") == "sqrt(2) = 1.41421356237"
    with pytest.raises(CommandInputError, match="calc: division by zero"):
        await run_text("calc", "1/0")
    with pytest.raises(CommandInputError, match="unknown function"):
        await run_text("calc", "__import__('os')")


async def test_unix(run_text: RunText) -> None:
    assert await run_text("unix", "0") == "0 (s) = 1970-01-01T00:00:00Z"
    assert await run_text("unix", "1700000000") == "1700000000 (s) = 2023-11-14T22:13:20Z"
    assert (
        await run_text("unix", "1700000000500")
        == "1700000000500 (ms) = 2023-11-14T22:13:20.500000Z"
    )
    assert await run_text("unix", "2023-11-14T22:13:20Z") == "2023-11-14T22:13:20Z = 1700000000"
    assert (
        await run_text("unix", "2023-11-14T23:13:20+01:00") == "2023-11-14T22:13:20Z = 1700000000"
    )
    assert await run_text("unix", "2023-11-14") == "2023-11-14T00:00:00Z = 1699920000"
    with pytest.raises(CommandInputError, match="cannot read 'yesterday'"):
        await run_text("unix", "yesterday")


def test_unix_now_gives_both_forms() -> None:
    moment = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
    assert convert_time("now", moment) == "1714564800 = 2024-05-01T12:00:00Z"


# text --------------------------------------------------------------------------------------


async def test_count(run_text: RunText) -> None:
    assert await run_text("count", "hello world") == "characters: 11, words: 2, lines: 1, bytes: 11"
    assert (
        await run_text("count", "héllo\nwörld") == "characters: 11, words: 2, lines: 2, bytes: 13"
    )
    with pytest.raises(CommandInputError):
        await run_text("count")


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("snake", "http_server_error_code"),
        ("kebab", "http-server-error-code"),
        ("camel", "httpServerErrorCode"),
        ("pascal", "HttpServerErrorCode"),
    ],
)
def test_convert_case(style: str, expected: str) -> None:
    assert convert_case("HTTPServer error-code", style) == expected


def test_split_words() -> None:
    assert split_words("parseHTTPResponse_v2 final-step") == [
        "parse",
        "HTTP",
        "Response",
        "v2",
        "final",
        "step",
    ]


async def test_case_command(run_text: RunText) -> None:
    assert await run_text("case", "snake helloWorld") == "hello_world"
    everything = await run_text("case", "hello world")
    assert everything.splitlines() == [
        "camel: helloWorld",
        "pascal: HelloWorld",
        "snake: hello_world",
        "kebab: hello-world",
    ]
    with pytest.raises(CommandInputError):
        await run_text("case", "snake ---")


# release -------------------------------------------------------------------------------------

CHANGELOG = """# Changelog

## [Unreleased]
- Work in progress.

## [1.2.0] - 2024-05-01
### Added
- Live tools.

## [1.1.0] - 2024-03-10
- Faster index.
"""


async def test_release(run_text: RunText, tmp_path: Path) -> None:
    (tmp_path / "CHANGELOG.md").write_text(CHANGELOG)
    (tmp_path / "package.json").write_text('{"name": "slackzilla", "version": "1.2.0"}')
    text = await run_text("release", root=tmp_path)
    lines = text.splitlines()
    assert lines[0].startswith("szrag ")
    assert "project slackzilla 1.2.0 (package.json)" in lines
    assert "release 1.2.0 (2024-05-01)" in lines
    assert "- Live tools." in text and "Faster index" not in text
    older = await run_text("release", "v1.1.0", root=tmp_path)
    assert "release 1.1.0 (2024-03-10)" in older and "- Faster index." in older
    missing = await run_text("release", "9.9.9", root=tmp_path)
    assert "version 9.9.9 is not in CHANGELOG.md" in missing


async def test_release_without_history(run_text: RunText, tmp_path: Path) -> None:
    text = await run_text("release", root=tmp_path)
    assert "no release history file (CHANGELOG.md)" in text


async def test_ask_needs_a_question(run_text: RunText) -> None:
    with pytest.raises(CommandInputError, match="ask needs a question"):
        await run_text("ask")


async def test_ask_answers_from_the_repository_through_its_hosts_pipeline(
    registry: CommandRegistry, tmp_path: Path
) -> None:
    from szrag.service.host import Host

    # No AI_API_KEY in tests: the question pipeline answers from retrieval alone.
    (tmp_path / "README.md").write_text(
        "# Widget\n\nThe widget service stores feedback in SQLite.\n"
    )
    host = Host.from_env(tmp_path, registry=registry)
    result = await host.runner.run("ask", "where is feedback stored?")
    assert "README.md:1-" in result.text
    # the host's own audit log has the question the command asked
    asks = [record for record in host.audit.read() if record["event"] == "ask"]
    assert [record["question"] for record in asks] == ["where is feedback stored?"]


async def test_ask_keeps_the_hosts_model_and_refuses_without_a_host(
    registry: CommandRegistry,
    tmp_path: Path,
    provider: ScriptedProvider,
    provider_settings: Callable[..., Settings],
    run_text: RunText,
) -> None:
    from szrag.service.host import Host

    (tmp_path / "README.md").write_text("# Widget\n\nFeedback is stored in SQLite.\n")
    provider.script(text_reply("In SQLite."))
    host = Host.from_env(tmp_path, registry=registry, settings=provider_settings())
    chosen = host.replace(settings=dataclasses.replace(host.settings, ai_model="chosen-model"))
    result = await chosen.runner.run("ask", "where is feedback stored?")

    assert result.text == "In SQLite."
    assert [request.json["model"] for request in provider.requests] == ["chosen-model"]
    with pytest.raises(CommandFailed, match="no question pipeline"):
        await run_text("ask", "where is feedback stored?")  # a runner no host owns
