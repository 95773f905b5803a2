"""Push webhooks: ``POST /api/repositories/{name}/webhook`` fetches a cloned repository now.

GitHub and GitLab cannot send the API's bearer token, so this route does not ask for one;
each request proves itself with the repository's own secret (``webhook_secret_env`` in the
service file names the variable holding it) instead:

* GitHub: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the secret>``;
* GitLab: ``X-Gitlab-Token: <the secret>``.

Both are compared in constant time, and a missing, malformed or wrong one is the same 401
``unauthorized`` ("the webhook's signature is not valid"), so a caller learns nothing about
which part was wrong. A repository that is unknown, read from a folder, or has no secret
configured has no webhook: one 404 ``no_webhook`` for all three, which lists no names.

A verified request is answered at once: a push to the served branch 202 (``accepted``: the
fetch and the incremental refresh run in the background, see ``service/remotes.py``), any
other event (GitHub's ``ping``) or a push to another branch 200 with ``accepted`` false and
the reason. The body is JSON (GitHub's form encoding, ``payload=...``, is read too). Each
address spends from the read budget (``SZRAG_READ_RATE_LIMIT``) before its body is read.
"""

from __future__ import annotations

import hashlib
import hmac
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from szrag.base.public import to_public
from szrag.server.errors import ApiError
from szrag.server.requests import parse_json_body, read_body
from szrag.server.state import ServerState, server_state

WEBHOOK_MAX_BODY_BYTES = 5 * 1024 * 1024  # a push of many commits; GitHub's own cap is 25 MB
NOT_VALID = "the webhook's signature is not valid"
GITHUB_PREFIX = "sha256="

router = APIRouter()
State = Annotated[ServerState, Depends(server_state)]


@dataclass(frozen=True, slots=True)
class WebhookReceipt:
    """What a verified webhook request was taken for: whether it starts a fetch, and why."""

    repository: str
    accepted: bool
    reason: str


def github_signed(body: bytes, signature: str, secret: str) -> bool:
    """Whether ``signature`` is GitHub's ``sha256=`` HMAC of ``body`` with ``secret``."""
    given = signature.strip()
    if not given.startswith(GITHUB_PREFIX):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    presented = given.removeprefix(GITHUB_PREFIX).lower()
    return hmac.compare_digest(expected.encode(), presented.encode("utf-8", "replace"))


def gitlab_signed(token: str, secret: str) -> bool:
    """Whether GitLab's ``X-Gitlab-Token`` is ``secret``."""
    return hmac.compare_digest(token.encode("utf-8", "replace"), secret.encode())


def verified(headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    """Whether the request carries a valid GitHub signature or GitLab token."""
    signature = headers.get("x-hub-signature-256")
    if signature is not None:
        return github_signed(body, signature, secret)
    token = headers.get("x-gitlab-token")
    if token is not None:
        return gitlab_signed(token, secret)
    return False


def event_of(headers: Mapping[str, str]) -> str:
    """The event a request reports (``push`` when it names none)."""
    github = headers.get("x-github-event")
    if github is not None:
        return github.strip().lower() or "unnamed"
    gitlab = headers.get("x-gitlab-event")
    if gitlab is not None:
        return "push" if gitlab.strip() == "Push Hook" else gitlab.strip() or "unnamed"
    return "push"


def payload_of(body: bytes, content_type: str) -> dict[str, Any]:
    """The event's JSON object (from a form's ``payload`` field too); ApiError 400."""
    if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
        fields = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        if "payload" not in fields:
            raise ApiError(400, "invalid_json", "a form-encoded webhook has no payload field")
        body = fields["payload"][0].encode()
    return parse_json_body(body)


def pushed_branch(payload: Mapping[str, Any]) -> str | None:
    """The branch a push event moved (``ref: refs/heads/NAME``), None for a tag or none."""
    ref = payload.get("ref")
    if isinstance(ref, str) and ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/")
    return None


@router.post("/api/repositories/{name}/webhook")
async def webhook(name: str, request: Request, state: State) -> JSONResponse:
    """Fetch repository ``name`` now, for a verified push to its branch (see the module)."""
    client = request.client.host if request.client else "unknown"
    decision = state.read_limiter.take(f"webhook:{client}")  # the read budget, per address
    if not decision.allowed:
        wait = decision.retry_after_header
        raise ApiError(
            429,
            "rate_limited",
            f"too many requests: try again in {wait} s",
            headers={"Retry-After": wait},
        )
    faces = state.repositories
    keeper = faces.keepers.get(name) if faces is not None else None
    secret = faces.service.webhook_secret(name) if faces is not None and keeper else None
    if keeper is None or secret is None:
        raise ApiError(
            404,
            "no_webhook",
            "no webhook here: a repository cloned from a URL has one when the service file"
            " names its secret's variable (webhook_secret_env)",
        )
    body = await read_body(request, WEBHOOK_MAX_BODY_BYTES)
    if not verified(request.headers, body, secret):
        raise ApiError(401, "unauthorized", NOT_VALID)
    event = event_of(request.headers)
    if event != "push":
        return _receipt(WebhookReceipt(name, False, f"a {event[:40]} event is not a push"), 200)
    branch = pushed_branch(payload_of(body, request.headers.get("content-type", "")))
    served = keeper.branch
    if branch is None or (served is not None and branch != served):
        pushed = f"branch {branch[:100]}" if branch is not None else "no branch"
        reason = f"a push to {pushed}; {served or 'the default branch'} is served"
        return _receipt(WebhookReceipt(name, False, reason), 200)
    keeper.trigger()
    return _receipt(WebhookReceipt(name, True, f"fetching {branch} in the background"), 202)


def _receipt(receipt: WebhookReceipt, status: int) -> JSONResponse:
    return JSONResponse({"ok": True, "data": to_public(receipt)}, status_code=status)
