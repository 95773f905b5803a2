"""Slack threads as conversations: which Events API messages the bot answers, and where.

A thread is one conversation of the store, under the caller-chosen key
``slack:<team>:<channel>:<thread_ts>`` (:func:`thread_key`): ``/sz-ask`` starts one under the
message it posts, ``@szrag question`` under the message that mentions it (or, said inside a
thread, under that thread). :func:`screen` reads one event callback and says whether to answer
it (a :class:`ThreadAsk`) or to acknowledge it and do nothing (None):

* ``app_mention``: answered, in the thread it opens or is part of;
* ``message`` with a ``thread_ts`` (a reply): answered when the thread's conversation is kept
  (the bot started it) and the setting is ``all``; a reply that mentions the bot is left to
  its ``app_mention`` event, and with ``mentions`` every reply is;
* messages of bots (the bot's own included), edits, deletions and other subtypes, and
  top-level messages that do not mention the bot are never answered;
* Slack redelivers an event it thinks was not acknowledged in time (``X-Slack-Retry-Num``),
  and sends a mention both as ``app_mention`` and as ``message``: each event id and each
  message (channel and ts) is answered once, remembered in a bounded :class:`SeenEvents`.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from szrag.commands import Identity
from szrag.rank.retrieve import MAX_QUESTION_CHARS

KEY_PREFIX = "slack"
SEEN_EVENTS = 4096  # event ids and messages remembered against redelivery
ANSWERED_SUBTYPES = frozenset({"thread_broadcast", "file_share"})  # a person's message still
_USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!([a-z]+)(?:\|[^>]*)?>")

IsKnown = Callable[[str], bool]


def thread_key(team: str, channel: str, thread_ts: str) -> str:
    """The conversation id of a Slack thread."""
    return f"{KEY_PREFIX}:{team}:{channel}:{thread_ts}"


@dataclass(frozen=True, slots=True)
class ThreadAsk:
    """A message the bot answers in a thread: the question, who asked, where to answer and
    the thread's conversation."""

    question: str
    identity: Identity
    channel: str
    thread_ts: str  # the thread's first message: replies go under it
    key: str  # the thread's conversation id
    event_id: str | None = None


class SeenEvents:
    """The event ids and messages answered lately, the oldest forgotten past ``size``."""

    def __init__(self, size: int = SEEN_EVENTS) -> None:
        self.size = size
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, *keys: str) -> bool:
        """Remember ``keys`` and return True, unless one of them was seen already (False:
        this is a redelivery, or another event of the same message)."""
        with self._lock:
            if any(key in self._seen for key in keys):
                return False
            for key in keys:
                self._seen[key] = None
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
            return True


class KeyedLocks:
    """One lock per key, held while a thread's question is answered so that a follow-up waits
    for the answer it follows; a lock is dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextlib.contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._lock:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                lock, users = self._locks[key]
                if users <= 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


def bot_user_id(body: Mapping[str, Any]) -> str | None:
    """The bot's own user id, as the event callback's ``authorizations`` name it."""
    for authorization in body.get("authorizations") or ():
        if isinstance(authorization, Mapping) and authorization.get("is_bot"):
            user = authorization.get("user_id")
            if isinstance(user, str) and user:
                return user
    return None


def plain_question(text: str, bot_user: str | None) -> str:
    """A message's text as a question: the bot's mention removed (any leading mention when
    the bot's id is unknown), other mentions, channels and links as readable text, Slack's
    escapes undone."""
    if bot_user:
        text = re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>", " ", text)
    else:
        text = re.sub(r"^\s*(?:<@[UW][A-Z0-9]+(?:\|[^>]*)?>\s*)+", " ", text)
    text = _USER.sub(lambda match: f"@{match.group(1)}", text)
    text = _CHANNEL.sub(lambda match: f"#{match.group(1)}", text)
    text = _LINK.sub(lambda match: _link_text(match.group(1), match.group(2)), text)
    text = _SPECIAL.sub(lambda match: f"@{match.group(1)}", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return re.sub(r"[ \t]+", " ", text).strip()[:MAX_QUESTION_CHARS]


def _link_text(url: str, label: str | None) -> str:
    if not label or label == url or url.endswith(f"//{label}") or url == f"mailto:{label}":
        return url
    return f"{label} ({url})"


def mentions(text: str, user: str | None) -> bool:
    """Whether ``text`` mentions ``user``."""
    return bool(user) and re.search(rf"<@{re.escape(str(user))}(?:\|[^>]*)?>", text) is not None


def screen(
    body: Mapping[str, Any],
    *,
    replies: str,
    is_known: IsKnown,
    seen: SeenEvents,
) -> ThreadAsk | None:
    """The question an event callback asks the bot in a thread, or None when the bot should
    only acknowledge it (see the module). ``replies``: ``all`` or ``mentions``; ``is_known``
    says whether a thread's conversation is kept; ``seen`` is claimed for what is answered."""
    event = body.get("event")
    if not isinstance(event, Mapping):
        return None
    kind = event.get("type")
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not (isinstance(user, str) and isinstance(channel, str) and isinstance(ts, str)):
        return None  # system messages and edits carry no author of their own
    if event.get("bot_id") or event.get("bot_profile"):
        return None  # a bot, this one included
    subtype = event.get("subtype")
    if subtype is not None and subtype not in ANSWERED_SUBTYPES:
        return None
    bot = bot_user_id(body)
    if user == bot:
        return None
    text = str(event.get("text") or "")
    team = str(body.get("team_id") or event.get("team") or "unknown")
    thread_ts = event.get("thread_ts")
    if kind == "app_mention":
        root = thread_ts if isinstance(thread_ts, str) and thread_ts else ts
    elif kind == "message":
        if not isinstance(thread_ts, str) or thread_ts == ts or replies != "all":
            return None
        if mentions(text, bot):
            return None  # its app_mention event answers it
        root = thread_ts
        if not is_known(thread_key(team, channel, root)):
            return None  # a thread the bot did not start
    else:
        return None
    question = plain_question(text, bot)
    event_id = body.get("event_id")
    claims = [f"message:{channel}:{ts}"]
    if isinstance(event_id, str) and event_id:
        claims.append(f"event:{event_id}")
    if not seen.claim(*claims):
        return None
    identity = Identity(user_id=user, user_name=user, channel_id=channel, team_id=team)
    return ThreadAsk(
        question=question,
        identity=identity,
        channel=channel,
        thread_ts=root,
        key=thread_key(team, channel, root),
        event_id=event_id if isinstance(event_id, str) else None,
    )
