"""Digests, random bytes and PBKDF2 for the ``hash`` command.

PBKDF2 input is ``pbkdf2 DIGEST ITERATIONS PASSWORD [SALT]`` (shell-style quoting allowed, so a
password may contain spaces). The salt is taken as UTF-8 text when given; otherwise 16 random
bytes are drawn and shown. The derived key has the digest's length and, like the salt, is
shown in lowercase hex. Iteration counts above MAX_ITERATIONS are refused: the command must
stay within its time limit and a larger count would be cancelled anyway.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from szrag.commands.errors import CommandInputError

MAX_ITERATIONS = 1_000_000
MAX_RANDOM_BYTES = 1024
DEFAULT_RANDOM_BYTES = 32
SALT_BYTES = 16

# name as typed -> hashlib name
DIGESTS = {
    "md5": "md5",
    "sha1": "sha1",
    "sha224": "sha224",
    "sha256": "sha256",
    "sha384": "sha384",
    "sha512": "sha512",
    "sha3": "sha3_256",
    "sha3-224": "sha3_224",
    "sha3-256": "sha3_256",
    "sha3-384": "sha3_384",
    "sha3-512": "sha3_512",
    "blake2": "blake2b",
    "blake2b": "blake2b",
    "blake2s": "blake2s",
}
# MD5 and BLAKE2 are not offered for PBKDF2: the first is broken, the second is not an HMAC
# digest OpenSSL accepts by these names.
PBKDF2_DIGESTS = frozenset(
    {"sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512"}
)


def digest_name(value: str) -> str | None:
    """The hashlib name for ``sha-256``, ``SHA256``, ``sha3_512``, ``blake2`` ...; None if unknown."""
    key = value.strip().lower().replace("_", "-")
    if key.startswith("sha-"):  # sha-1, sha-256 ...
        key = "sha" + key[4:]
    return DIGESTS.get(key)


def hexdigest(algorithm: str, text: str) -> str:
    """The hex digest of ``text`` (UTF-8) with a hashlib algorithm name."""
    return hashlib.new(algorithm, text.encode("utf-8")).hexdigest()


def random_hex(count: int = DEFAULT_RANDOM_BYTES) -> str:
    """``count`` cryptographically random bytes as hex."""
    if not 1 <= count <= MAX_RANDOM_BYTES:
        raise CommandInputError(f"rand takes a byte count from 1 to {MAX_RANDOM_BYTES}")
    return secrets.token_hex(count)


@dataclass(frozen=True)
class Pbkdf2Result:
    """A derived key and everything needed to derive it again."""

    digest: str
    iterations: int
    salt: bytes
    key: bytes
    random_salt: bool


def parse_iterations(value: str) -> int:
    """An iteration count such as ``100000``, ``100,000``, ``100_000`` or ``100k``."""
    raw = value.strip().lower().replace(",", "").replace("_", "")
    multiplier = 1
    if raw.endswith("k"):
        raw, multiplier = raw[:-1], 1000
    if not raw.isdigit():
        raise CommandInputError(f"iterations must be a whole number, not {value!r}")
    count = int(raw) * multiplier
    if count < 1:
        raise CommandInputError("iterations must be at least 1")
    if count > MAX_ITERATIONS:
        raise CommandInputError(
            f"{count:,} iterations is more than the {MAX_ITERATIONS:,} this command allows"
        )
    return count


def pbkdf2(digest: str, iterations: int, password: str, salt: str | None = None) -> Pbkdf2Result:
    """PBKDF2-HMAC of ``password`` (UTF-8); a random 16-byte salt when ``salt`` is None."""
    algorithm = digest_name(digest)
    if algorithm is None or algorithm not in PBKDF2_DIGESTS:
        offered = ", ".join(sorted(name.replace("_", "-") for name in PBKDF2_DIGESTS))
        raise CommandInputError(f"PBKDF2 digest {digest!r} is not supported; use one of {offered}")
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise CommandInputError(f"iterations must be between 1 and {MAX_ITERATIONS:,}")
    if not password:
        raise CommandInputError("PBKDF2 needs a password")
    salt_bytes = salt.encode("utf-8") if salt is not None else secrets.token_bytes(SALT_BYTES)
    key = hashlib.pbkdf2_hmac(algorithm, password.encode("utf-8"), salt_bytes, iterations)
    return Pbkdf2Result(algorithm, iterations, salt_bytes, key, random_salt=salt is None)
