"""The ask and feedback requests as the HTTP API receives them: parsed and checked before
anything runs.

The identity that asks is the authenticated caller. The body's ``userId``, ``username``,
``channelId`` and ``teamId`` are claims anyone could make, so they are honoured only from the
holder of the admin token (a trusted front end asking for its users); otherwise they are
ignored.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import ClientDisconnect, Request

from szrag.answer.question import NamedCommand, Question
from szrag.base.errors import ClientGone, ConversationError, RepositoryError
from szrag.commands.model import Identity
from szrag.context.plan import MAX_BUDGET
from szrag.conversations import checked_id
from szrag.rank.retrieve import MAX_QUESTION_CHARS
from szrag.server.auth import Caller
from szrag.server.errors import ApiError
from szrag.service.feedback import MAX_COMMENT_CHARS, MAX_RIGHT_FILES
from szrag.service.repositories import checked_name

API_FACE = "api"
MAX_COMMAND_TEXT_CHARS = 4000
MAX_FIELD_CHARS = 200
MAX_PATH_CHARS = 1000

_IDENTITY_FIELDS = ("userId", "username", "channelId", "teamId")


@dataclass(frozen=True, slots=True)
class FeedbackRequest:
    """Feedback on one answer from the identity that asks."""

    answer_id: str
    rating: str
    right_files: tuple[str, ...] = ()
    comment: str | None = None
    identity: Identity = field(default_factory=Identity)


BODY_READ_TIMEOUT = 30.0  # seconds a client may leave the next piece of its body unsent


async def read_body(request: Request, limit: int, *, timeout: float | None = None) -> bytes:
    """The request body, or ApiError 413 as soon as it is known to be over ``limit`` bytes,
    408 when the client stalls for ``timeout`` seconds between pieces; ClientGone when it hangs
    up mid-upload."""
    timeout = BODY_READ_TIMEOUT if timeout is None else timeout
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "payload_too_large", f"the request body is over {limit} bytes")
    received = bytearray()
    pieces = request.stream().__aiter__()
    while True:
        try:
            async with asyncio.timeout(timeout):
                piece = await pieces.__anext__()
        except StopAsyncIteration:
            return bytes(received)
        except TimeoutError:
            raise ApiError(
                408, "request_timeout", f"the request body stalled for {timeout:g} s"
            ) from None
        except ClientDisconnect:
            raise ClientGone("the client hung up while sending its request") from None
        received += piece
        if len(received) > limit:
            raise ApiError(413, "payload_too_large", f"the request body is over {limit} bytes")


def parse_json_body(body: bytes) -> dict[str, Any]:
    """The body as a JSON object, or ApiError 400."""
    if not body.strip():
        raise ApiError(400, "invalid_json", "the request body is empty: send a JSON object")
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError(
            400, "invalid_json", f"the request body is not valid JSON: {error}"
        ) from None
    except RecursionError:  # hundreds of thousands of nested brackets
        raise ApiError(400, "invalid_json", "the request body is nested too deeply") from None
    if not isinstance(payload, dict):
        raise ApiError(400, "invalid_json", "the request body must be a JSON object")
    return payload


def _optional_text(payload: dict[str, Any], key: str, limit: int) -> str | None:
    value = payload.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiError(400, "invalid_request", f"{key} must be a string")
    value = value.strip()
    if len(value) > limit:
        raise ApiError(400, "invalid_request", f"{key} is longer than {limit} characters")
    return value or None


def parse_ask(payload: dict[str, Any], caller: Caller) -> Question:
    """Check the fields of an ask payload from ``caller``; anything wrong is ApiError 400."""
    question = payload.get("question")
    if question is not None and not isinstance(question, str):
        raise ApiError(400, "invalid_request", "question must be a string")
    question = (question or "").strip()
    if not question:
        raise ApiError(400, "empty_question", "the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise ApiError(
            400, "invalid_request", f"the question is longer than {MAX_QUESTION_CHARS} characters"
        )
    with_ai = payload.get("withAi", True)
    if not isinstance(with_ai, bool):
        raise ApiError(400, "invalid_request", "withAi must be true or false")
    budget = payload.get("budget")
    if budget is not None and (
        not isinstance(budget, int) or isinstance(budget, bool) or not 0 <= budget <= MAX_BUDGET
    ):
        raise ApiError(
            400, "invalid_request", f"budget must be a whole number of tokens, 0 to {MAX_BUDGET}"
        )
    conversation_id = _optional_id(payload, "conversationId", "conversation")
    command_id = _optional_text(payload, "commandId", MAX_FIELD_CHARS)
    command_text = _optional_text(payload, "commandText", MAX_COMMAND_TEXT_CHARS)
    return Question(
        question,
        with_ai=with_ai,
        command=NamedCommand(command_id, command_text or "") if command_id is not None else None,
        identity=identity_of(payload, caller),
        face=API_FACE,
        privileged=caller.admin,
        budget=budget,
        conversation_id=conversation_id,
        remember=True,  # every answer is kept, so it can be rated and followed up
    )


def parse_repository(payload: dict[str, Any]) -> str | None:
    """The repository an ask payload names (``"repository"``), or None; a value that cannot
    name one is ApiError 400 (an unknown name is the service's 404)."""
    value = payload.get("repository")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiError(400, "invalid_request", "repository must be a repository's name")
    try:
        return checked_name(value.strip())
    except RepositoryError as error:
        raise ApiError(400, "invalid_request", error.message) from None


def identity_of(payload: dict[str, Any], caller: Caller) -> Identity:
    """Who asks: the caller, or for the admin token the identity the body names."""
    user_id, user_name, channel_id, team_id = (
        _optional_text(payload, key, MAX_FIELD_CHARS) for key in _IDENTITY_FIELDS
    )
    if caller.admin:
        return Identity(
            user_id=user_id or caller.user_id,
            user_name=user_name or user_id or caller.user_id,
            channel_id=channel_id or "api",
            team_id=team_id or "api",
        )
    return Identity(caller.user_id, caller.user_id, "api", "api")


def _optional_id(payload: dict[str, Any], key: str, what: str) -> str | None:
    value = payload.get(key)
    if value is None:
        return None
    try:
        return checked_id(value, what)
    except ConversationError as error:
        raise ApiError(400, "invalid_request", f"{key}: {error.message}") from None


def parse_feedback(payload: dict[str, Any], caller: Caller) -> FeedbackRequest:
    """Check the fields of a feedback payload (``answerId``, ``rating``, ``rightFiles``,
    ``comment``); the library checks the files against the index."""
    answer_id = _optional_id(payload, "answerId", "answer")
    if answer_id is None:
        raise ApiError(400, "invalid_request", "answerId is required: the id of an answer")
    rating = payload.get("rating")
    if rating not in ("up", "down"):
        raise ApiError(400, "invalid_request", "rating must be up or down")
    files = payload.get("rightFiles", [])
    if files is None:
        files = []
    if not isinstance(files, list) or not all(
        isinstance(path, str) and 0 < len(path.strip()) <= MAX_PATH_CHARS for path in files
    ):
        raise ApiError(400, "invalid_request", "rightFiles must be a list of repository paths")
    if len(files) > MAX_RIGHT_FILES:
        raise ApiError(400, "invalid_request", f"rightFiles names at most {MAX_RIGHT_FILES} files")
    return FeedbackRequest(
        answer_id=answer_id,
        rating=rating,
        right_files=tuple(path.strip() for path in files),
        comment=_optional_text(payload, "comment", MAX_COMMENT_CHARS),
        identity=identity_of(payload, caller),
    )
