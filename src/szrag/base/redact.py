"""Secret redaction: credentials in text are replaced with ``[REDACTED:kind]`` markers.

Two families of rules run in order:

1. *Formats* that are secrets wherever they appear: PEM private key blocks (whole block,
   also when a chunk boundary cuts it), Slack tokens and webhook URLs, GitHub, GitLab,
   Hugging Face, OpenAI, Anthropic, Stripe, Google, AWS, Twilio and Discord keys (the
   shapes of detect-secrets' and gitleaks' rules), JWTs, bearer and Basic credentials,
   passwords in URLs and connection strings (Azure ``AccountKey=`` too).
2. *Assignments* to secret-named keys (``password``, ``DB_PASS``, ``api_key``, ``token``,
   ``secret``, ``client_secret``, ``private_key``, ``access_key``, ``auth`` ...) in the forms
   code and configuration use: ``KEY = "value"``, ``key: value``, ``"key": "value"``,
   ``KEY=value``. Only literal values are secrets: ``token = tokens(question)`` or
   ``password_field = form.password`` are code and stay as they are. A bare word after a
   spaced ``=`` (``password = fallback_password``) is taken for a variable in code, but for
   a value in a configuration file: a ``path`` of type .ini/.conf/.cfg/.properties/.env*, or
   a text with an INI ``[section]`` line.
   Names that merely end in ``key`` (``ENCRYPTION_KEY``, ``session_key``) are often not
   secrets (``sort_key = "date"``); their value is redacted only when it looks random.
3. *Prose and markup*: secrets in comments, under secret-named YAML keys, in XML elements
   named for a secret (``<password>``), and stated in prose ("the admin password is X").

The rules aim at precision: a false positive hides code from the model, a false negative
leaks a credential, and both are tested.

:func:`redact_for_display` is for a person at their own terminal: in a test file, a
low-entropy literal assigned to a secret-named key (a fixture's ``password123``) is shown,
marked ``[TEST VALUE:password123]``; every other rule is as :func:`redact`'s. Whatever goes to
a model, an answer that is kept or a log is redacted with :func:`redact`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from szrag.base.memo import TextMemo
from szrag.base.text import is_test_path

MARKER = "[REDACTED:{kind}]"
_MARKER_PREFIX = "[REDACTED:"


@dataclass(frozen=True, slots=True)
class Redaction:
    """Text with its secrets replaced, how many were replaced and of which kinds."""

    text: str
    count: int
    kinds: tuple[str, ...]


def marker(kind: str) -> str:
    """The replacement written in place of a secret of ``kind``."""
    return MARKER.format(kind=kind)


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern whose ``secret`` group (or whole match) is replaced when ``keep`` allows."""

    kind: str
    pattern: re.Pattern[str]
    keep: Callable[[re.Match[str]], bool] | None = None
    # Substrings the rule cannot match without: the text must hold one of ``needles`` and,
    # lowercased, one of ``lowered``. Most texts hold none, and a `str` search is far
    # cheaper than a pattern that starts with a lookbehind (tried at every position).
    needles: tuple[str, ...] = ()
    lowered: tuple[str, ...] = ()
    # A pattern that never matches across a line break, and redacts only a match whose own
    # line holds a part of a secret name (``_SECRET_NAME_PARTS``): run on those lines alone.
    # An assignment pattern matches every assignment of a text, and most lines of code hold
    # no secret name.
    by_line: bool = False
    # A pattern the text must hold a match of first, for a rule no substring gates: one that
    # starts with a literal is searched fast, where the rule's own lookbehind is tried at
    # every position.
    gate: re.Pattern[str] | None = None


def _has_template(value: str) -> bool:
    return any(mark in value for mark in ("${", "{{", "%(", "<%", "$(")) or value.startswith("$")


def _has_digit_or_mixed_case(value: str) -> bool:
    """Random credentials nearly always have a digit or both cases; prose does not."""
    return any(char.isdigit() for char in value) or (
        value != value.lower() and value != value.upper()
    )


def _is_basic_credential(match: re.Match[str]) -> bool:
    """True when the value decodes to ``user:password``, as a Basic credential does."""
    try:
        decoded = base64.b64decode(match.group("secret"), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


# Formats: each is a secret wherever it appears. Order matters: whole PEM blocks first,
# then the longer prefixes (sk-ant- before sk-). A PEM marker only counts when key material
# (base64, or an encrypted key's headers) follows it, so code that merely mentions the
# marker string is left alone.
_PEM_BODY = r"(?:\\[nr]|\s)+(?:[A-Za-z0-9+/=]{16,}|Proc-Type:)"
_FORMAT_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?=" + _PEM_BODY + r")"
            r"(?:.*?-----END (?P=label)-----|.*\Z)",
            re.DOTALL,
        ),
        needles=("PRIVATE KEY",),
    ),
    # The tail of a block whose BEGIN line fell in an earlier chunk.
    _Rule(
        "private_key",
        re.compile(
            r"\A(?:(?!-----BEGIN ).)*?(?<![A-Za-z0-9+/=])[A-Za-z0-9+/=]{16,}+(?:\\[nr]|\s)++"
            r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
            re.DOTALL,
        ),
        needles=("PRIVATE KEY",),
    ),
    _Rule(
        "slack_webhook",
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}"
        ),
        needles=("https://hooks.slack.com/",),
    ),
    _Rule("slack_token", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"), needles=("xox",)),
    _Rule("slack_token", re.compile(r"(?<![\w-])xapp-\d-[A-Za-z0-9-]{10,}"), needles=("xapp-",)),
    _Rule(
        "github_token",
        re.compile(r"(?<![\w-])gh[pousr]_[A-Za-z0-9]{36,255}\b"),
        needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _Rule(
        "github_token",
        re.compile(r"(?<![\w-])github_pat_[A-Za-z0-9_]{22,255}\b"),
        needles=("github_pat_",),
    ),
    _Rule(
        "anthropic_key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_\-]{20,}"), needles=("sk-ant-",)
    ),
    _Rule(
        "openai_key",
        re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        keep=lambda match: _has_digit_or_mixed_case(match.group()),
        needles=("sk-",),
    ),
    _Rule(
        "stripe_key",
        re.compile(r"(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
        needles=("k_live_", "k_test_"),
    ),
    _Rule("stripe_key", re.compile(r"(?<![\w-])whsec_[A-Za-z0-9]{20,}"), needles=("whsec_",)),
    _Rule(
        "google_api_key",
        re.compile(r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])"),
        needles=("AIza",),
    ),
    _Rule(
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        needles=("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    _Rule(
        "aws_secret_access_key",
        re.compile(
            r"(?i:aws_?secret_?access_?key)[\"']?\s*(?:=|:|=>)\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        lowered=("aws",),
    ),
    _Rule(
        "jwt",
        re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
        needles=("eyJ",),
    ),
    _Rule(
        "bearer_token",
        re.compile(r"\b[Bb]earer\s+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"),
        keep=lambda match: _has_digit_or_mixed_case(match.group("secret")),
        needles=("Bearer", "bearer"),
    ),
    _Rule(
        "basic_auth",
        re.compile(r"\b[Bb]asic[ \t]+(?P<secret>[A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])"),
        keep=_is_basic_credential,
        needles=("Basic", "basic"),
    ),
    _Rule(
        "url_password",
        re.compile(
            r"(?<![a-zA-Z0-9+.\-])[a-zA-Z][a-zA-Z0-9+.\-]*+://"
            r"[^\s:/@\"'`]*+:(?P<secret>[^\s/@\"'`]++)@"
        ),
        keep=lambda match: not _has_template(match.group("secret")),
        needles=("://",),
    ),
    # The next four are the shapes of detect-secrets' plugins (gitlab_token, twilio,
    # discord, its first part widened to the user ids of today) and of gitleaks'
    # huggingface rule, bounded so they match no longer word.
    _Rule(
        "huggingface_token",
        re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,40}(?![\w-])"),
        keep=lambda match: _has_digit_or_mixed_case(match.group()[3:]),
        needles=("hf_",),
    ),
    _Rule(
        "gitlab_token",
        re.compile(
            r"(?<![\w-])(?:glpat|gldt|glft|glsoat|glrt|glptt)-[A-Za-z0-9_\-]{20,50}(?![\w-])"
        ),
        needles=("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glptt-"),
    ),
    _Rule(
        "twilio_key",
        re.compile(r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
        gate=re.compile(r"SK[0-9a-fA-F]{32}"),
    ),
    _Rule(
        "discord_token",
        re.compile(
            r"(?<![\w-])[MNO][A-Za-z0-9_\-]{23,27}+\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}+(?![\w-])"
        ),
        keep=lambda match: _has_digit_or_mixed_case(match.group().rsplit(".", 1)[1]),
        gate=re.compile(r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}"),
    ),
    # Azure storage and Service Bus connection strings: `AccountKey=...;`
    _Rule(
        "azure_key",
        re.compile(
            r"(?i:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"
            r"(?![A-Za-z0-9+/=])"
        ),
        lowered=("accountkey", "sharedaccesskey"),
    ),
    _Rule(
        "sendgrid_key",
        re.compile(r"(?<![\w-])SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
        needles=("SG.",),
    ),
    # ADO.NET / ODBC connection strings: `Server=db;User Id=sa;Password=S3cret!;`
    _Rule(
        "connection_string_password",
        re.compile(
            r"(?i)(?:(?<=;)|(?<=[\"']))[ \t]*(?:password|pwd)[ \t]*=[ \t]*"
            r"(?P<secret>[^;\"'\r\n]+)(?=;|[\"']|$)",
            re.MULTILINE,
        ),
        keep=lambda match: (
            ";" in match.string[max(0, match.start() - 200) : match.end() + 1]
            and _plain_literal(match.group("secret"))
        ),
        needles=(";",),
        lowered=("password", "pwd"),
    ),
    # `curl -u admin:pass`, `curl --user admin:pass`
    _Rule(
        "curl_password",
        re.compile(r"(?:\s|^)(?:-u|--user)[ \t=]+[\"']?[^\s:\"']+:(?P<secret>[^\s\"']+)"),
        keep=lambda match: not _has_template(match.group("secret")),
        needles=("-u",),
    ),
)

# Assignments to secret-named keys.
SECRET_WORDS = frozenset(
    {
        "password",
        "pass",
        "passwd",
        "pwd",
        "passphrase",
        "token",
        "secret",
        "auth",
        "apikey",
        "authorization",
        "credential",
        "credentials",
    }
)
SECRET_PAIRS = frozenset(
    {("api", "key"), ("secret", "key"), ("private", "key"), ("access", "key"), ("client", "secret")}
)
# secret words that end a longer word only as a secret ("bypass" ends in pass, "compass" too)
_JOINED_SECRET_WORDS = ("password", "passwd", "passphrase", "secret")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_KEY_WORD = re.compile(r"[a-z0-9]+")


def key_words(key: str) -> list[str]:
    """The lowercase words of a key: ``slackBotToken`` and ``SLACK_BOT_TOKEN`` give the same."""
    return _KEY_WORD.findall(_CAMEL.sub(r"\1_\2", key).lower())


def is_secret_name(key: str) -> bool:
    """True when a key names a secret: its last word (or last two) is a secret word.

    ``DB_PASSWORD``, ``DB_PASS``, ``slackBotToken``, ``api-key``, ``client_secret`` are secret
    names; ``password_field``, ``token_type``, ``max_tokens``, ``chars_per_token`` (a rate)
    are not.
    """
    words = key_words(key)
    if not words:
        return False
    if len(words) > 2 and words[-2] == "per":
        return False  # so many for each: CHARS_PER_TOKEN counts, it holds no token
    return (
        words[-1] in SECRET_WORDS
        # one word run together: PGPASSWORD, MYSQL_ROOTPASSWORD, dbsecret
        or words[-1].endswith(_JOINED_SECRET_WORDS)
        or tuple(words[-2:]) in SECRET_PAIRS
        or ("private", "key") in itertools.pairwise(words)
    )


def _is_key_name(key: str) -> bool:
    """True for ``ENCRYPTION_KEY``, ``sessionKey``: may hold a secret, or just a lookup key."""
    words = key_words(key)
    return len(words) > 1 and words[-1] == "key"


def looks_random(value: str) -> bool:
    """True for a generated credential: long, letters and digits mixed, high entropy."""
    if len(value) < 16 or any(char.isspace() for char in value):
        return False
    digits = sum(char.isdigit() for char in value)
    if digits == 0 or not any(char.isalpha() for char in value):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return digits >= 4 or entropy >= 4.0


_CONFIG_SUFFIXES = frozenset({".ini", ".conf", ".cfg", ".properties", ".env"})
_INI_SECTION = re.compile(r"^[ \t]*\[[\w .:\-]+\][ \t]*$", re.MULTILINE)


@functools.lru_cache(maxsize=4096)  # asked for every text packed, of a few files each
def is_config_path(path: str) -> bool:
    """True for configuration files that write values bare: .ini, .conf, .cfg, .properties,
    .env and .env.* files."""
    name = PurePosixPath(path).name.lower()
    return PurePosixPath(name).suffix in _CONFIG_SUFFIXES or name.startswith(".env")


_KEY = r"[A-Za-z_][\w.\-]*+"
_QUOTED_ASSIGNMENT = re.compile(
    r"(?:(?P<q>[\"'])(?P<qkey>" + _KEY + r")(?P=q)|(?<![\w.\-$\"'`])(?P<key>" + _KEY + r"))"
    r"[ \t]*+(?::[ \t]*+[\w\[\]|.,<>][\w\[\]|.,<> \t]{0,59}?(?==))?"  # a type annotation
    r"(?:=>|:=|=(?!=)|:)[ \t]*+(?:[rRbBuU]{1,2})?"
    r"(?P<quote>[\"'`])(?P<secret>(?:\\.|(?!(?P=quote))[^\\\n])*)(?P=quote)"
)
_UNQUOTED_EQUALS = re.compile(
    r"^(?P<indent>[ \t]*+)(?:export[ \t]++)?(?P<key>" + _KEY + r")(?P<before>[ \t]*+)=(?!=)"
    r"[ \t]*+(?P<secret>[^\s\"'`#][^\s#]*+)[ \t]*+(?:#.*)?$",
    re.MULTILINE,
)
_UNQUOTED_COLON = re.compile(
    r"^[ \t]*(?:-[ \t]+)?(?:(?P<q>[\"'])(?P<qkey>" + _KEY + r")(?P=q)|(?P<key>" + _KEY + r"))"
    r"[ \t]*+:[ \t]++(?P<secret>[^\s\"'`#][^\s#]*+)[ \t]*+(?:#.*)?$",  # one word: prose is not
    re.MULTILINE,
)

_CODE_WORDS = frozenset(
    {
        "none", "null", "nil", "undefined", "true", "false", "yes", "no", "on", "off",
        "str", "string", "int", "integer", "bytes", "bool", "boolean", "float", "number",
        "any", "unknown", "object", "optional", "secretstr", "text", "required",
    }
)  # fmt: skip
_DOTTED_NAME = re.compile(r"^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$")
_TYPE_NAME = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")
_CODE_CHARACTERS = frozenset("()[]{}<>;")


def _looks_like_code(value: str, key: str) -> bool:
    """True when an unquoted value is an expression, a reference or a type, not a literal."""
    stripped = value.strip()
    return (
        not stripped
        or stripped.lower() in _CODE_WORDS
        or stripped == key
        or stripped.startswith(("$", "@", "%", "&", "*", "!", "|", ">", _MARKER_PREFIX))
        or stripped.endswith((",", ";", "{", "\\"))
        or any(char in _CODE_CHARACTERS for char in stripped)
        or any(char.isspace() for char in stripped)  # prose, or an expression with operators
        or "=>" in stripped
        or bool(_DOTTED_NAME.match(stripped))
        or bool(_TYPE_NAME.match(stripped))
        or _has_template(stripped)
    )


def _plain_literal(value: str) -> bool:
    """True when a quoted value is a literal worth hiding: not empty, a template or a marker."""
    return bool(value.strip()) and not _has_template(value) and _MARKER_PREFIX not in value


def _names_secret(key: str, value: str) -> bool:
    """True when ``key`` names a secret, or names a key and ``value`` looks generated."""
    return is_secret_name(key) or (_is_key_name(key) and looks_random(value))


def _keep_quoted(match: re.Match[str]) -> bool:
    key, value = match.group("qkey") or match.group("key"), match.group("secret")
    return _names_secret(key, value) and _plain_literal(value)


def _keep_unquoted_equals(match: re.Match[str]) -> bool:
    key, value = match.group("key"), match.group("secret")
    if not _names_secret(key, value) or _looks_like_code(value, key):
        return False
    # `password = fallback_password` (spaced or indented) is code referring to a variable;
    # `.env` files write `PASSWORD=hunter2` unindented and unspaced. A generated-looking
    # value is a credential either way.
    spaced = bool(match.group("before")) or bool(match.group("indent"))
    return not (spaced and _IDENTIFIER.match(value)) or looks_random(value)


def _keep_config_equals(match: re.Match[str]) -> bool:
    """In a configuration file every bare value is a literal: ``password = hunter2``,
    ``token = PascalCaseValue`` (there are no type names in an INI file)."""
    key, value = match.group("key"), match.group("secret")
    return _names_secret(key, value) and (
        not _looks_like_code(value, key) or bool(_TYPE_NAME.match(value.strip()))
    )


def _keep_unquoted_colon(match: re.Match[str]) -> bool:
    key, value = match.group("qkey") or match.group("key"), match.group("secret")
    return _names_secret(key, value) and not _looks_like_code(value, key)


# A key names a secret only when its lowercased text holds one of these (``key_words`` are
# pieces of it): the assignment rules cannot redact a text without one.
_SECRET_NAME_PARTS = ("pass", "pwd", "token", "secret", "auth", "credential", "key")
_SECRET_PART = re.compile("|".join(_SECRET_NAME_PARTS))


def _assignment(pattern: re.Pattern[str], keep: Callable[[re.Match[str]], bool]) -> _Rule:
    # the key is on the line of its value, and a kept match's key holds one of the parts
    return _Rule("secret_value", pattern, keep, lowered=_SECRET_NAME_PARTS, by_line=True)


_ASSIGNMENT_RULES: tuple[_Rule, ...] = (
    _assignment(_QUOTED_ASSIGNMENT, _keep_quoted),
    _assignment(_UNQUOTED_EQUALS, _keep_unquoted_equals),
    _assignment(_UNQUOTED_COLON, _keep_unquoted_colon),
)
_CONFIG_ASSIGNMENT_RULES: tuple[_Rule, ...] = (
    _ASSIGNMENT_RULES[0],
    _assignment(_UNQUOTED_EQUALS, _keep_config_equals),
    _ASSIGNMENT_RULES[2],
)

RULES: tuple[_Rule, ...] = _FORMAT_RULES + _ASSIGNMENT_RULES
_CONFIG_RULES: tuple[_Rule, ...] = _FORMAT_RULES + _CONFIG_ASSIGNMENT_RULES
KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))


def _folded(text: str) -> str:
    """``text`` lowercased as a case-insensitive pattern compares it, for ``_Rule.lowered``:
    such a pattern also takes the dotless i and the long s for i and s."""
    lowered = text.lower()
    if "\u0131" in lowered:
        lowered = lowered.replace("\u0131", "i")
    if "\u017f" in lowered:
        lowered = lowered.replace("\u017f", "s")
    return lowered


Shown = Callable[[str], bool]
"""Which secret values an assignment rule shows, marked, instead of redacting them."""

TEST_VALUE = "[TEST VALUE:{value}]"
MAX_TEST_VALUE_CHARS = 32


def _apply(rule: _Rule, text: str, found: list[str], shown: Shown | None = None) -> str:
    def replace(match: re.Match[str]) -> str:
        whole = match.group()
        has_group = "secret" in rule.pattern.groupindex
        secret = match.group("secret") if has_group else whole
        if secret.startswith(_MARKER_PREFIX) or (rule.keep is not None and not rule.keep(match)):
            return whole  # already redacted, or not a secret after all
        if not has_group:
            found.append(rule.kind)
            return marker(rule.kind)
        start, end = match.span("secret")
        offset = match.start()
        if shown is not None and rule.kind == "secret_value" and shown(secret):
            value = TEST_VALUE.format(value=secret)
            return whole[: start - offset] + value + whole[end - offset :]
        found.append(rule.kind)
        return whole[: start - offset] + marker(rule.kind) + whole[end - offset :]

    return rule.pattern.sub(replace, text)


def _secret_lines(text: str, lowered: str) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``text`` whose folded form holds a part of a secret
    name, in order; the whole text when folding moved its characters."""
    if len(lowered) != len(text):  # a character lowercased into two: no offsets to share
        return [(0, len(text))]
    spans: list[tuple[int, int]] = []
    for found in _SECRET_PART.finditer(lowered):
        if spans and found.start() < spans[-1][1]:
            continue  # on the line already taken
        end = lowered.find("\n", found.start())
        spans.append((lowered.rfind("\n", 0, found.start()) + 1, len(text) if end < 0 else end))
    return spans


def _apply_on_lines(
    rule: _Rule,
    text: str,
    lines: list[tuple[int, int]],
    found: list[str],
    shown: Shown | None = None,
) -> str:
    """``_apply`` on the given lines of ``text`` alone: the same result for a rule that never
    matches across a line break and keeps only matches whose line holds a secret name."""
    pieces: list[str] = []
    taken = 0
    for start, end in lines:
        line = text[start:end]
        redacted = _apply(rule, line, found, shown)
        if redacted is not line:
            pieces += [text[taken:start], redacted]
            taken = end
    if not pieces:
        return text
    return "".join(pieces) + text[taken:]


def redact_text(text: str, *, path: str | None = None) -> Redaction:
    """``text`` with every secret replaced by ``[REDACTED:kind]``, and what was replaced.

    ``path``, the file the text comes from, tells configuration from code (see the module)."""
    return _REMEMBERED(text, path)


def _redact(text: str, path: str | None, shown: Shown | None = None) -> Redaction:
    config = is_config_path(path) if path is not None else bool(_INI_SECTION.search(text))
    rules, needles, folded_needles = _CONFIG_CHAIN if config else _CHAIN
    found: list[str] = []
    # of the text as it is now (a marker may have changed it): the needles it holds, looked
    # for once rather than rule by rule, its folded form and the folded needles it holds
    held = {needle for needle in needles if needle in text}
    lowered: str | None = None
    held_folded: set[str] | None = None
    lines: list[tuple[int, int]] | None = None  # its lines holding a secret name's part
    for rule in rules:
        if rule.needles and held.isdisjoint(rule.needles):
            continue
        if rule.gate is not None and not rule.gate.search(text):
            continue
        if rule.lowered:
            lowered = _folded(text) if lowered is None else lowered
            if held_folded is None:
                held_folded = {needle for needle in folded_needles if needle in lowered}
            if held_folded.isdisjoint(rule.lowered):
                continue
            if rule.by_line:
                lines = _secret_lines(text, lowered) if lines is None else lines
                redacted = _apply_on_lines(rule, text, lines, found, shown)
            else:
                redacted = _apply(rule, text, found, shown)
        else:
            redacted = _apply(rule, text, found, shown)
        if redacted is not text:
            text, lowered, lines, held_folded = redacted, None, None, None
            held = {needle for needle in needles if needle in text}
    lowered = _folded(text) if lowered is None else lowered
    if ":" in text and any(part in lowered for part in _SECRET_NAME_PARTS):
        text = _redact_yaml_blocks(text, found)  # only under a secret-named key
    return Redaction(text=text, count=len(found), kinds=tuple(sorted(set(found))))


def _chain(rules: tuple[_Rule, ...]) -> tuple[tuple[_Rule, ...], frozenset[str], frozenset[str]]:
    """The rules run on a text, in order, and every needle and folded needle they have."""
    return (
        rules,
        frozenset(needle for rule in rules for needle in rule.needles),
        frozenset(needle for rule in rules for needle in rule.lowered),
    )


# Redaction is a pure function of the text and its path, and the same chunks are packed for
# question after question: a long-running process redacts each one once.
REMEMBERED_CHARS = 16_000_000
_REMEMBERED: TextMemo[Redaction] = TextMemo(
    _redact, max_chars=REMEMBERED_CHARS, size=lambda redaction: len(redaction.text)
)


def redact(text: str, *, path: str | None = None) -> str:
    """``text`` with every secret replaced by ``[REDACTED:kind]``."""
    return redact_text(text, path=path).text


def is_test_value(value: str) -> bool:
    """A literal a test would use as a password or token: short, not generated-looking."""
    return len(value) <= MAX_TEST_VALUE_CHARS and not looks_random(value)


def redact_for_display(text: str, *, path: str) -> str:
    """``text`` as a person at their own terminal sees it: redacted as :func:`redact` does,
    but in a test file a low-entropy value assigned to a secret-named key is shown, marked
    ``[TEST VALUE:...]`` (never for a model, a kept answer or a log)."""
    if not is_test_path(path):
        return redact(text, path=path)
    return _redact(text, path, is_test_value).text


# Secrets written in prose and comments, and nested under a secret-named YAML key.
# ``# the deploy token: 9f8e7d6c5b``: in a comment only (in code, ``token: str`` is a type)
# and only a value that looks generated or carries a digit.
_COMMENT_ASSIGNMENT = re.compile(
    r"(?:#|//|/\*|^[ \t]*\*|--|<!--)[^\n]*?\b(?P<key>[\w\-]*(?:token|password|passwd|secret"
    r"|api[_\-]?key|credentials?))[ \t]*[:=][ \t]*(?P<secret>[^\s\"'`,;)]{6,})",
    re.IGNORECASE | re.MULTILINE,
)
# credentials:\n  value: s3cr3t -- every scalar in the block under a secret-named key
_YAML_SECRET_PARENT = re.compile(
    r"^(?P<indent>[ \t]*)(?P<key>[A-Za-z_][\w.\-]*)[ \t]*:[ \t]*(?:#.*)?\n"
    r"(?P<block>(?:(?P=indent)[ \t]+[^\n]*\n?)+)",
    re.MULTILINE,
)
_YAML_SCALAR = re.compile(
    r"^(?P<lead>[ \t]+(?:-[ \t]+)?[A-Za-z_][\w.\-]*[ \t]*:[ \t]+)(?P<secret>[^\s#][^#\n]*?)[ \t]*$",
    re.MULTILINE,
)


# Under a secret-named key, the scalars that hold its material.
_VALUE_KEYS = frozenset({"value", "data", "key", "content", "plaintext", "raw"})


def _keep_comment(match: re.Match[str]) -> bool:
    value = match.group("secret")
    return _plain_literal(value) and (any(char.isdigit() for char in value) or looks_random(value))


def _redact_yaml_blocks(text: str, found: list[str]) -> str:
    def block(match: re.Match[str]) -> str:
        head = match.group()[: match.start("block") - match.start()]
        if not is_secret_name(match.group("key")):  # a secret-named key may sit deeper
            return head + _redact_yaml_blocks(match.group("block"), found)

        def scalar(inner: re.Match[str]) -> str:
            value = inner.group("secret").strip("\"'")
            name = inner.group("lead").strip().lstrip("-").strip().rstrip(":").strip()
            wanted = (
                name.lower() in _VALUE_KEYS
                or _names_secret(name, value)
                or any(char.isdigit() for char in value)
            )
            if not wanted or not _plain_literal(value) or value.lower() in _CODE_WORDS:
                return inner.group()
            found.append("secret_value")
            return inner.group("lead") + marker("secret_value")

        return head + _YAML_SCALAR.sub(scalar, match.group("block"))

    return _YAML_SECRET_PARENT.sub(block, text)


# <password>hunter2</password>, <db:adminPassword>...</db:adminPassword>: an XML element
# whose name names a secret holds one as its text
_XML_ELEMENT = re.compile(
    r"<(?P<tag>[A-Za-z_][\w.\-]*(?::[A-Za-z_][\w.\-]*)?)>"
    r"(?P<secret>[^<>\s][^<>\n]*?)</(?P=tag)>"
)


def _keep_xml(match: re.Match[str]) -> bool:
    tag = match.group("tag").rpartition(":")[2]
    return is_secret_name(tag) and _plain_literal(match.group("secret"))


# "the admin password is Tr0ub4dor&3": prose that states a password. Only a value with a
# digit or mixed case counts ("the password is required" is no password), and no code word
# or expression ("if password is None").
_PROSE_PASSWORD = re.compile(
    r"(?i)\b(?:password|passphrase|passwd)[ \t]+(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+)?"
    r"[\"'`]?(?P<secret>[^\s\"'`]+?)[\"'`]?(?=[.,;:!?)]*(?:\s|$))"
)


def _keep_prose_password(match: re.Match[str]) -> bool:
    value = match.group("secret")
    return (
        _plain_literal(value)
        and _has_digit_or_mixed_case(value)
        and value.lower() not in _CODE_WORDS
        and not any(char in _CODE_CHARACTERS for char in value)
        and not _DOTTED_NAME.match(value)
    )


_PROSE_RULES: tuple[_Rule, ...] = (
    _Rule("secret_value", _XML_ELEMENT, _keep_xml, needles=("</",), lowered=_SECRET_NAME_PARTS),
    _Rule(
        "secret_value",
        _PROSE_PASSWORD,
        _keep_prose_password,
        lowered=("passw", "passphrase"),
        by_line=True,
    ),
    _Rule(
        "secret_value",
        _COMMENT_ASSIGNMENT,
        _keep_comment,
        lowered=("token", "passw", "secret", "api", "credential"),
        # a match is one line, and its key's line holds a part of a secret name (the
        # lines ``_secret_lines`` gives are a superset of those holding one of ``lowered``)
        by_line=True,
    ),
)

_CHAIN = _chain(RULES + _PROSE_RULES)
_CONFIG_CHAIN = _chain(_CONFIG_RULES + _PROSE_RULES)


# The vocabulary and rules of runtime data (tool output, logs, audit records): the same
# words, any word of a key counting.
REDACTED = "[REDACTED]"

# The secret vocabulary, plus what runtime data adds: cookies, credentials, the
# environment, plurals. Here any word of a key counts, not only the last: a tool's output is
# data about the service, and ``passwordPolicy`` or ``tokens`` need not reach a model.
_SENSITIVE_WORDS = SECRET_WORDS | {
    "authorisation",
    "cookie",
    "cookies",
    "passwords",
    "secrets",
    "tokens",
    "credential",
    "credentials",
    "env",
    "environ",
    "environment",
}
_SENSITIVE_JOINED = (*sorted("".join(pair) for pair in SECRET_PAIRS), "setcookie")


def is_sensitive_key(key: str) -> bool:
    """True when a value stored under ``key`` should not be shown."""
    words = key_words(key)
    joined = "".join(words)
    return (
        any(word in _SENSITIVE_WORDS for word in words)
        or any(part in joined for part in _SENSITIVE_JOINED)
        or is_secret_name(key)
    )


# ``password=hunter2`` inside a log line or a message. Repository text is code and only an
# unquoted assignment that ends its line counts there; runtime text is prose, so in it any
# secret-named key followed by = or : loses its value (redact_prose).
# The words are the secret vocabulary's, longest first so ``password`` wins over ``pass``; a key
# ending in a bare ``key`` counts too (log lines rarely hold lookup keys).
_INLINE_WORDS = sorted(
    {*SECRET_WORDS, "key", *(f"{first}[_\\-]?{second}" for first, second in SECRET_PAIRS)},
    key=lambda word: (-len(word), word),
)
_INLINE_ASSIGNMENT = re.compile(
    rf"(?P<key>\b[\w.\-]*?(?:{'|'.join(_INLINE_WORDS)})(?![a-z0-9]))"
    r"(?P<separator>\s*[=:]\s*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&]+)",
    re.IGNORECASE,
)


def _redact_inline(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.strip("\"'").startswith("[REDACTED") or not value.strip("\"'"):
        return match.group()
    return match.group("key") + match.group("separator") + REDACTED


def redact_prose(text: str) -> str:
    """``text`` (a log line, a message) with the value of every inline ``password=...``,
    ``token: ...`` replaced by ``[REDACTED]``; run after :func:`redact`."""
    return _INLINE_ASSIGNMENT.sub(_redact_inline, text)
