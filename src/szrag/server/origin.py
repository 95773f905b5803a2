"""Which hosts and browser origins may reach the server: the defence against DNS rebinding and
cross-site requests.

An open API (no ``SZRAG_API_TOKENS``) trusts whoever can connect, which is meant to be this
machine only. A web page elsewhere can still reach it by making its own host name resolve to
127.0.0.1 (DNS rebinding): the browser then sends ``Host: evil.example`` and
``Origin: http://evil.example``, which agree with each other. So an open server answers only
requests naming an allowed host (loopback, the address it is bound to, ``SZRAG_ALLOWED_HOSTS``),
and a browser origin is judged against those hosts and ``SZRAG_CORS_ORIGINS``, never against
the request's own ``Host``. With tokens required, the token is what protects: any ``Host`` is
served and a page may call the API from the origin it was served from.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from szrag.server.auth import is_loopback
from szrag.server.errors import ApiError
from szrag.server.settings import ServerSettings


def host_name(value: str) -> str | None:
    """The lower-case name of a ``Host`` header or origin authority (port and brackets
    dropped), or None when there is none."""
    try:
        return urlsplit("//" + value.strip()).hostname or None
    except ValueError:  # an unbalanced bracket, say
        return None


def allowed_host(name: str | None, settings: ServerSettings, bound_host: str | None) -> bool:
    """Whether a request naming host ``name`` is meant for this server."""
    if not name:
        return False
    bound = host_name(bound_host) if bound_host else None
    return is_loopback(name) or name == bound or name in settings.allowed_hosts


def check_host(host: str | None, settings: ServerSettings, bound_host: str | None) -> None:
    """ApiError 403 when an open server is asked for a host it does not serve."""
    if settings.auth_required:
        return
    if not allowed_host(host_name(host or ""), settings, bound_host):
        raise ApiError(
            403,
            "forbidden_host",
            "this server does not answer to that host name (SZRAG_ALLOWED_HOSTS)",
        )


def origin_allowed(
    origin: str, host: str | None, settings: ServerSettings, bound_host: str | None
) -> bool:
    """Whether a browser page at ``origin`` may call this server."""
    if origin in settings.cors_origins or "*" in settings.cors_origins:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https"):
        return False  # "null" (sandboxed frames, files) and the like
    if allowed_host(host_name(parts.netloc), settings, bound_host):
        return True
    # Behind tokens the page needs its token to do anything, so its own origin is enough.
    return settings.auth_required and parts.netloc.lower() == (host or "").strip().lower()


def check_origin(
    origin: str | None, host: str | None, settings: ServerSettings, bound_host: str | None
) -> None:
    """ApiError 403 for a browser request from an origin this server does not allow."""
    if not origin or origin_allowed(origin, host, settings, bound_host):
        return
    raise ApiError(
        403, "forbidden_origin", "cross-origin requests are not allowed here (SZRAG_CORS_ORIGINS)"
    )
