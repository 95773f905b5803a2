"""Password hashing with PBKDF2-HMAC-SHA256 from the standard library.

Stored format (self-describing, so the iteration count can be raised later)::

    pbkdf2_sha256$<iterations>$<salt, base64>$<derived key, base64>
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

ALGORITHM = "pbkdf2_sha256"
SALT_BYTES = 16
KEY_BYTES = 32
MIN_PASSWORD_LENGTH = 12


class WeakPasswordError(ValueError):
    """The password does not meet the minimum requirements."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def check_strength(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise WeakPasswordError(f"passwords need at least {MIN_PASSWORD_LENGTH} characters")
    if password.strip() != password:
        raise WeakPasswordError("passwords may not start or end with whitespace")


def hash_password(password: str, iterations: int) -> str:
    """A new salted hash of ``password``."""
    salt = secrets.token_bytes(SALT_BYTES)
    derived = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations, KEY_BYTES)
    return f"{ALGORITHM}${iterations}${_b64(salt)}${_b64(derived)}"


def verify_password(password: str, encoded: str) -> bool:
    """True when ``password`` matches the stored hash. Constant-time comparison."""
    try:
        algorithm, iterations, salt, expected = encoded.split("$")
        rounds = int(iterations)
    except ValueError:
        return False
    if algorithm != ALGORITHM:
        return False
    derived = hashlib.pbkdf2_hmac(
        "sha256", password.encode("utf-8"), _unb64(salt), rounds, len(_unb64(expected))
    )
    return hmac.compare_digest(derived, _unb64(expected))


def needs_rehash(encoded: str, iterations: int) -> bool:
    """True when the hash was made with fewer iterations than currently configured."""
    try:
        algorithm, rounds, _salt, _key = encoded.split("$")
        return algorithm != ALGORITHM or int(rounds) < iterations
    except ValueError:
        return True


# Verifying against this when the user does not exist keeps login timing the same for
# unknown and known usernames.
DUMMY_HASH = hash_password("not-a-real-password", 10_000)
