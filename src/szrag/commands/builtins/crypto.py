"""hash, token and uuid."""

from __future__ import annotations

import asyncio
import secrets
import shlex
import uuid

from szrag.commands import hashing
from szrag.commands.errors import CommandInputError
from szrag.commands.model import CommandContext, CommandSpec

HASH_USAGE = (
    "/sz-hash ALGORITHM TEXT | /sz-hash rand [BYTES] | "
    "/sz-hash pbkdf2 DIGEST ITERATIONS PASSWORD [SALT]"
)
DEFAULT_TOKEN_LENGTH = 32
MAX_TOKEN_LENGTH = 512
MAX_UUIDS = 20


def _whole_number(value: str, what: str) -> int:
    if not value.isdigit():
        raise CommandInputError(f"{what} must be a whole number, not {value!r}")
    return int(value)


async def _pbkdf2(context: CommandContext, arguments: str) -> None:
    try:
        parts = shlex.split(arguments)
    except ValueError:
        raise CommandInputError("unbalanced quotes in the PBKDF2 arguments") from None
    if len(parts) not in (3, 4):
        raise CommandInputError(f"usage: {HASH_USAGE.split(' | ')[2]}")
    digest, iterations_text, password, *salt = parts
    iterations = hashing.parse_iterations(iterations_text)
    # Off the event loop: a million iterations take a noticeable fraction of a second.
    result = await asyncio.to_thread(
        hashing.pbkdf2, digest, iterations, password, salt[0] if salt else None
    )
    salt_label = "salt (random, hex)" if result.random_salt else "salt (UTF-8 text, hex)"
    context.respond(
        f"PBKDF2-HMAC-{result.digest.upper().replace('_', '-')}, {result.iterations} iterations\n"
        f"{salt_label}: {result.salt.hex()}\n"
        f"derived key (hex): {result.key.hex()}"
    )


async def hash_command(context: CommandContext) -> None:
    """Digest text, draw random bytes, or derive a PBKDF2 key."""
    first, _, rest = context.text.partition(" ")
    keyword = first.lower()
    if not first:
        raise CommandInputError(f"usage: {HASH_USAGE}")
    if keyword in ("rand", "random"):
        count = _whole_number(rest.strip(), "the byte count") if rest.strip() else None
        value = hashing.random_hex(count or hashing.DEFAULT_RANDOM_BYTES)
        context.respond(f"random ({len(value) // 2} bytes): {value}")
        return
    if keyword == "pbkdf2":
        await _pbkdf2(context, rest)
        return
    algorithm = hashing.digest_name(first)
    text = rest.strip() if algorithm else context.text
    if algorithm is None:
        algorithm = "sha256"
    if not text:
        raise CommandInputError(f"{first} needs some text to hash")
    context.respond(f"{algorithm.replace('_', '-')}: {hashing.hexdigest(algorithm, text)}")


async def token(context: CommandContext) -> None:
    """A random hexadecimal token of the given length (default 32 characters)."""
    raw = context.text.split()[0] if context.text else ""
    length = _whole_number(raw, "the length") if raw else DEFAULT_TOKEN_LENGTH
    if not 1 <= length <= MAX_TOKEN_LENGTH:
        raise CommandInputError(f"token length must be 1 to {MAX_TOKEN_LENGTH}")
    context.respond(secrets.token_hex((length + 1) // 2)[:length])


async def uuid_command(context: CommandContext) -> None:
    """One or more random (version 4) UUIDs."""
    raw = context.text.split()[0] if context.text else ""
    number = _whole_number(raw, "the count") if raw else 1
    if not 1 <= number <= MAX_UUIDS:
        raise CommandInputError(f"ask for 1 to {MAX_UUIDS} UUIDs")
    context.respond("\n".join(str(uuid.uuid4()) for _ in range(number)))


COMMANDS = (
    CommandSpec(
        "hash",
        "Hash text (md5, sha1, sha256, sha512, sha3, blake2), draw random bytes, or derive "
        "a PBKDF2 key.",
        hash_command,
        category="crypto",
        usage=HASH_USAGE,
        sensitive=True,
        secret_output=True,
    ),
    CommandSpec(
        "token",
        "Generate a random hexadecimal token.",
        token,
        category="crypto",
        usage="/sz-token [LENGTH]",
        secret_output=True,
    ),
    CommandSpec(
        "uuid", "Generate random UUIDs.", uuid_command, category="crypto", usage="/sz-uuid [COUNT]"
    ),
)
