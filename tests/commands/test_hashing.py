"""Digest names, iteration counts and PBKDF2 against hashlib."""

from __future__ import annotations

import hashlib

import pytest

from szrag.commands.errors import CommandInputError
from szrag.commands.hashing import MAX_ITERATIONS, digest_name, parse_iterations, pbkdf2


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("sha256", "sha256"),
        ("SHA-256", "sha256"),
        ("sha-1", "sha1"),
        ("sha3", "sha3_256"),
        ("sha3_512", "sha3_512"),
        ("SHA3-224", "sha3_224"),
        ("blake2", "blake2b"),
        ("md5", "md5"),
        ("sha999", None),
        ("pbkdf2", None),
    ],
)
def test_digest_name(typed: str, name: str | None) -> None:
    assert digest_name(typed) == name


@pytest.mark.parametrize(
    ("typed", "count"),
    [("100000", 100000), ("100,000", 100000), ("100_000", 100000), ("100k", 100000), ("1", 1)],
)
def test_parse_iterations(typed: str, count: int) -> None:
    assert parse_iterations(typed) == count


@pytest.mark.parametrize(
    ("typed", "message"),
    [("0", "at least 1"), ("-5", "whole number"), ("lots", "whole number"), ("1001k", "more than")],
)
def test_parse_iterations_refuses(typed: str, message: str) -> None:
    with pytest.raises(CommandInputError, match=message):
        parse_iterations(typed)


def test_pbkdf2_matches_hashlib() -> None:
    result = pbkdf2("sha256", 1000, "hunter2", "pepper")
    assert result.key == hashlib.pbkdf2_hmac("sha256", b"hunter2", b"pepper", 1000)
    assert (result.digest, result.iterations, result.salt, result.random_salt) == (
        "sha256",
        1000,
        b"pepper",
        False,
    )


def test_pbkdf2_random_salts_differ() -> None:
    first, second = pbkdf2("sha1", 10, "pw"), pbkdf2("sha1", 10, "pw")
    assert first.random_salt and len(first.salt) == 16
    assert first.salt != second.salt and first.key != second.key
    assert first.key == hashlib.pbkdf2_hmac("sha1", b"pw", first.salt, 10)


def test_pbkdf2_limits() -> None:
    with pytest.raises(CommandInputError, match="between 1 and"):
        pbkdf2("sha256", MAX_ITERATIONS + 1, "pw")
    with pytest.raises(CommandInputError, match="needs a password"):
        pbkdf2("sha256", 10, "")
    with pytest.raises(CommandInputError, match="not supported"):
        pbkdf2("blake2", 10, "pw")
