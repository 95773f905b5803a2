"""Who is calling: bearer tokens for the API, a separate admin token, and the exposure rule.

Tokens are compared in constant time and never logged; a caller is known by a short digest of
its token (or, on an open loopback server, by its address), which is also its rate-limit key.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from szrag.base.errors import ConfigError
from szrag.server.errors import ApiError
from szrag.server.settings import ServerSettings

TOKEN_PREFIX = "token:"
LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


@dataclass(frozen=True, slots=True)
class Caller:
    """An API caller: its rate-limit identity and whether it holds the admin token."""

    key: str
    admin: bool = False

    @property
    def user_id(self) -> str:
        """Who the caller is in audit records and metrics: its token's digest, or ``local`` on
        an open (loopback-only) server, where every caller is someone at this machine."""
        return self.key if self.key.startswith(TOKEN_PREFIX) else "local"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, settings: ServerSettings) -> None:
    """Refuse to serve an open API on an address other machines can reach."""
    if not is_loopback(host) and not settings.api_tokens:
        raise ConfigError(
            f"refusing to listen on {host} without authentication: set SZRAG_API_TOKENS "
            "(comma-separated bearer tokens) or listen on 127.0.0.1"
        )


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def token_in(candidate: str, tokens: Iterable[str]) -> bool:
    """Whether ``candidate`` equals one of ``tokens``, compared in constant time."""
    given = candidate.encode()
    found = False
    for token in tokens:
        found |= hmac.compare_digest(given, token.encode())
    return found


def fingerprint(token: str) -> str:
    """A short digest that names a token in logs and rate limits without revealing it."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def authenticate(
    authorization: str | None, client_host: str | None, settings: ServerSettings
) -> Caller:
    """The caller of an API request, or ApiError 401 when a required token is missing or wrong."""
    token = bearer_token(authorization)
    admin = bool(token and settings.admin_token and token_in(token, [settings.admin_token]))
    if admin and token is not None:
        return Caller(key=f"{TOKEN_PREFIX}{fingerprint(token)}", admin=True)
    if not settings.auth_required:
        return Caller(key=f"ip:{client_host or 'unknown'}")
    if token is None:
        raise ApiError(
            401, "unauthorized", "this server needs a bearer token (Authorization: Bearer ...)"
        )
    if not token_in(token, settings.api_tokens):
        raise ApiError(401, "unauthorized", "the bearer token is not valid")
    return Caller(key=f"{TOKEN_PREFIX}{fingerprint(token)}")


def require_admin(caller: Caller, settings: ServerSettings) -> None:
    """ApiError 403 unless ``caller`` presented the admin token."""
    if not settings.admin_token:
        raise ApiError(
            403, "forbidden", "admin routes are disabled: set SZRAG_ADMIN_TOKEN to enable them"
        )
    if not caller.admin:
        raise ApiError(403, "forbidden", "this route needs the admin token")
