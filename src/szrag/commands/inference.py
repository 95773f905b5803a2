"""Finding a command to run in a question (the spec's inferCommandInvocation).

* A ``/sz-<name>`` mention that names a registered command runs it with the text after the
  name, an optional leading word ``command`` removed (``run the /sz-ping command``).
* A ``/sz-hash`` request that names a password and an iteration count (``/sz-hash the
  password hunter2 with PBKDF2 and 100000 iterations using sha256``) becomes
  ``pbkdf2 DIGEST ITERATIONS PASSWORD [SALT]``. Without the ``/sz-hash`` mention a question is
  never run as a hash, as in the spec: "how does auth.js hash the password argument with 100000
  iterations?" asks about code. The digest is the first one the question
  names, sha512 otherwise, as in the spec. Unlike the spec, the algorithm is always PBKDF2:
  the spec falls back to ``sha256``, which builds input no hash command can read, since an
  iteration count only means something to a key-derivation function.
* ``/sz-ask`` is never inferred: the question is already being asked, and running ``ask``
  from inside an answer would recurse (with an allowlist of ``*``, without end).
* ``is_command_oriented`` tells whether the question asks to run, execute, use, call or
  invoke a command, so the answer path can skip codebase expansion.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from szrag.commands import hashing
from szrag.commands.registry import CommandRegistry

DEFAULT_PBKDF2_DIGEST = "sha512"
NEVER_INFERRED = frozenset({"ask"})

_SLASH = re.compile(r"(?<![\w/-])/sz-([a-z0-9][a-z0-9_-]*)", re.IGNORECASE)
_LEADING_COMMAND = re.compile(r"^(?:the\s+)?command\b[\s:,-]*", re.IGNORECASE)
_VERBS = r"run|runs|running|ran|execute|executes|executing|executed|use|uses|using|" + (
    r"call|calls|calling|invoke|invokes|invoking|trigger|triggering"
)
_ORIENTED = re.compile(rf"\b(?:{_VERBS})\b[^.?!\n]*?(?:\bcommands?\b|/sz-[a-z0-9])", re.IGNORECASE)
_QUOTES = "\"'`"

_SECRET_WORD = r"(?:password|passphrase|passwd|pass\s+phrase)"
_LINK = r"(?:\s+(?:is|of|as)\b\s*|\s*[=:]\s*|\s+)"
_QUOTED_SECRET = re.compile(
    rf"\b{_SECRET_WORD}{_LINK}(?P<q>[\"'`])(?P<value>.+?)(?P=q)", re.IGNORECASE
)
_BARE_SECRET = re.compile(rf"\b{_SECRET_WORD}{_LINK}(?P<value>[^\s\"'`]+)", re.IGNORECASE)
_QUOTED_SALT = re.compile(rf"\bsalt{_LINK}(?P<q>[\"'`])(?P<value>.+?)(?P=q)", re.IGNORECASE)
_BARE_SALT = re.compile(rf"\bsalt{_LINK}(?P<value>[^\s\"'`]+)", re.IGNORECASE)
_ITERATIONS = re.compile(
    r"(?P<a>\d[\d,_]*k?)\s*(?:iterations?|rounds?)\b"
    r"|\b(?:iterations?|rounds?)(?:\s+count)?\s*(?:of|=|:|to)?\s*(?P<b>\d[\d,_]*k?)\b",
    re.IGNORECASE,
)
_DIGEST = re.compile(
    r"\b(sha3[-_]?(?:224|256|384|512)|sha3|sha-?(?:1|224|256|384|512)|md5|blake2[bs]?)\b",
    re.IGNORECASE,
)
# Words that follow "password" in prose without being one ("hash the password with ...").
_NOT_A_PASSWORD = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "by", "for", "from", "hash", "hashed", "hashing",
        "in", "into", "is", "it", "iterations", "of", "on", "or", "please", "the", "then",
        "this", "that", "to", "using", "via", "when", "where", "which", "while", "with",
    }
)  # fmt: skip
_TRAILING_PUNCTUATION = ".,;:?)"
PASSWORD_MARKER = "[REDACTED:password]"
INPUT_MARKER = "[REDACTED:command input]"


@dataclass(frozen=True)
class Invocation:
    """A command found in a question, its input, and whether the question is about running it."""

    id: str
    text: str
    command_oriented: bool
    # Literal spans of the question to withhold from logs and the model, each with its marker:
    # the password of a hash request, or the whole input of a sensitive command.
    withheld: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)


def is_command_oriented(question: str) -> bool:
    """True when the question asks to run, execute, use, call or invoke a command."""
    return bool(_ORIENTED.search(question))


def _secret(question: str, quoted: re.Pattern[str], bare: re.Pattern[str]) -> str | None:
    match = quoted.search(question)
    if match:
        return match.group("value")
    for match in bare.finditer(question):
        value = match.group("value").rstrip(_TRAILING_PUNCTUATION)
        if value and value.lower() not in _NOT_A_PASSWORD:
            return value
    return None


def _iterations(question: str) -> str | None:
    match = _ITERATIONS.search(question)
    if not match:
        return None
    return (match.group("a") or match.group("b")).replace(",", "").replace("_", "")


def _digest(question: str) -> str:
    for match in _DIGEST.finditer(question):
        name = hashing.digest_name(match.group(1))
        if name is not None and name in hashing.PBKDF2_DIGESTS:
            return name.replace("_", "-")
    return DEFAULT_PBKDF2_DIGEST


def _hash_request(question: str) -> tuple[str, str] | None:
    """(command input, password) of a password-hashing request, or None."""
    password = _secret(question, _QUOTED_SECRET, _BARE_SECRET)
    iterations = _iterations(question)
    if password is None or iterations is None:
        return None
    parts = ["pbkdf2", _digest(question), iterations, shlex.quote(password)]
    salt = _secret(question, _QUOTED_SALT, _BARE_SALT)
    if salt is not None:
        parts.append(shlex.quote(salt))
    return " ".join(parts), password


def hash_invocation_text(question: str) -> str | None:
    """``pbkdf2 DIGEST ITERATIONS PASSWORD [SALT]`` from a password-hashing request, or None."""
    request = _hash_request(question)
    return request[0] if request else None


def _replace_literal(text: str, literal: str, marker: str) -> str:
    """Every occurrence of ``literal`` that is not part of a longer word, as ``marker``."""
    if not literal:
        return text
    return re.sub(rf"(?<!\w){re.escape(literal)}(?!\w)", marker, text)


def redact_invocation_secrets(question: str, invocation: Invocation | None) -> str:
    """``question`` with what ``invocation`` took from it as a secret replaced by a marker.

    A hash request's password becomes ``[REDACTED:password]`` wherever it appears; the input of
    a sensitive command named with ``/sz-`` becomes ``[REDACTED:command input]``. A question
    with nothing to withhold comes back unchanged."""
    if invocation is None:
        return question
    for literal, marker in sorted(invocation.withheld, key=lambda pair: -len(pair[0])):
        question = _replace_literal(question, literal, marker)
    return question


def withhold_named_input(question: str, text: str, *, sensitive: bool) -> str:
    """``question`` with the input ``text`` a caller gave a command it named explicitly
    (``run /sz-hash sha256 hunter2``) replaced by ``[REDACTED:command input]`` when the
    command's input is ``sensitive``; unchanged otherwise."""
    if not sensitive:
        return question
    return _replace_literal(question, text.strip(), INPUT_MARKER)


def redact_password_phrases(text: str) -> str:
    """``text`` with the value of every ``password hunter2`` / ``passphrase is "x y"`` phrase
    replaced by ``[REDACTED:password]``.

    Meant for logs: it can also take a word that was not a password ("password reset"), which
    is harmless there but would blur a question shown to a model."""
    for pattern in (_QUOTED_SECRET, _BARE_SECRET):
        text = pattern.sub(_redact_phrase, text)
    return text


def _redact_phrase(match: re.Match[str]) -> str:
    value = match.group("value")
    bare = value.rstrip(_TRAILING_PUNCTUATION)
    if not bare or bare.lower() in _NOT_A_PASSWORD or bare.startswith("[REDACTED"):
        return match.group()
    start, end = match.span("value")
    offset = match.start()
    whole = match.group()
    return whole[: start - offset] + PASSWORD_MARKER + value[len(bare) :] + whole[end - offset :]


def _text_after(question: str, match: re.Match[str]) -> str:
    rest = question[match.end() :]
    before = question[match.start() - 1] if match.start() > 0 else ""
    if before and before in _QUOTES and before in rest:  # `/sz-calc 2+2` quoted as a whole
        rest = rest[: rest.index(before)]
    rest = _LEADING_COMMAND.sub("", rest.strip())
    return rest.strip().rstrip("?").strip()


def _inferable(registry: CommandRegistry, name: str) -> bool:
    spec = registry.get(name)
    return spec is not None and spec.id not in NEVER_INFERRED


def infer_command_invocation(question: str, registry: CommandRegistry) -> Invocation | None:
    """The command a question asks for, with its input; None when it names none."""
    oriented = is_command_oriented(question)
    slash = next((m for m in _SLASH.finditer(question) if _inferable(registry, m.group(1))), None)
    if slash is None:
        return None
    spec = registry.get(slash.group(1))
    assert spec is not None
    if spec.id == "hash":
        request = _hash_request(question)
        if request is not None:
            text, password = request
            return Invocation(spec.id, text, oriented, ((password, PASSWORD_MARKER),))
    text = _text_after(question, slash)
    withheld = ((text, INPUT_MARKER),) if spec.sensitive and text else ()
    return Invocation(spec.id, text, oriented, withheld)
