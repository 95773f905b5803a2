import pytest

from stockroom.auth import passwords


def test_round_trip() -> None:
    encoded = passwords.hash_password("correct horse battery", 10_000)
    assert encoded.startswith("pbkdf2_sha256$10000$")
    assert passwords.verify_password("correct horse battery", encoded)
    assert not passwords.verify_password("wrong horse battery", encoded)


def test_same_password_gets_different_salts() -> None:
    assert passwords.hash_password("same password!", 10_000) != passwords.hash_password(
        "same password!", 10_000
    )


def test_malformed_hash_never_verifies() -> None:
    assert not passwords.verify_password("x", "not-a-hash")
    assert not passwords.verify_password("x", "bcrypt$10$abc$def")


def test_needs_rehash_when_iterations_raised() -> None:
    encoded = passwords.hash_password("correct horse battery", 10_000)
    assert passwords.needs_rehash(encoded, 600_000)
    assert not passwords.needs_rehash(encoded, 10_000)


@pytest.mark.parametrize("weak", ["short", " leading-space-password", "trailing-space-pw "])
def test_weak_passwords_rejected(weak: str) -> None:
    with pytest.raises(passwords.WeakPasswordError):
        passwords.check_strength(weak)
