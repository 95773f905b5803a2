"""The bot's calls to Slack's Web API: posting, updating and whispering messages.

One :class:`SlackWeb` per server, over slack_sdk's ``WebClient`` with the bot token
(``SLACK_BOT_TOKEN``) and the Web API base URL (``SZRAG_SLACK_API_URL``, Slack's own by
default; a proxy, an Enterprise Grid gateway, or a test's local server). Its calls block: the
Slack face's listener threads make them, never the event loop. A refusal (Slack's
``ok: false``) or a Slack that cannot be reached is a :class:`~szrag.base.errors.SlackApiFailed`
carrying Slack's error code (``not_in_channel``, ``channel_not_found``...) or ``unreachable``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from szrag.base.errors import SlackApiFailed
from szrag.server.slack_blocks import Block, message_text

log = logging.getLogger("szrag.server.slack")

TIMEOUT_SECONDS = 15
NOT_THERE = frozenset({"not_in_channel", "channel_not_found"})  # post through response_url
CONTINUED = "(continued)"


class SlackWeb:
    """``chat.postMessage``, ``chat.update``, ``chat.postEphemeral`` and ``views.open`` for
    the bot."""

    def __init__(self, token: str, base_url: str, *, timeout: int = TIMEOUT_SECONDS) -> None:
        self.client = WebClient(token=token, base_url=base_url, timeout=timeout)

    def post(
        self,
        channel: str,
        *,
        text: str,
        blocks: Sequence[Block] | None = None,
        thread_ts: str | None = None,
    ) -> str:
        """Post a message (into a thread with ``thread_ts``); its ``ts``."""
        response = self._call(
            self.client.chat_postMessage,
            channel=channel,
            text=text,
            blocks=list(blocks) if blocks is not None else None,
            thread_ts=thread_ts,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response.get("ts") or "")

    def update(self, channel: str, ts: str, *, text: str, blocks: Sequence[Block]) -> None:
        """Replace the bot's message ``ts``."""
        self._call(self.client.chat_update, channel=channel, ts=ts, text=text, blocks=list(blocks))

    def ephemeral(
        self,
        channel: str,
        user: str,
        *,
        text: str,
        blocks: Sequence[Block] | None = None,
        thread_ts: str | None = None,
    ) -> None:
        """Show a message only to ``user`` (in the thread ``thread_ts``, when given)."""
        self._call(
            self.client.chat_postEphemeral,
            channel=channel,
            user=user,
            text=text,
            blocks=list(blocks) if blocks is not None else None,
            thread_ts=thread_ts,
        )

    def open_view(self, trigger_id: str, view: dict[str, Any]) -> None:
        """Open a modal for the person whose click gave ``trigger_id``."""
        self._call(self.client.views_open, trigger_id=trigger_id, view=view)

    def deliver(
        self,
        channel: str,
        messages: Sequence[Sequence[Block]],
        *,
        thread_ts: str | None,
        replace_ts: str | None = None,
        text: str = "",
    ) -> None:
        """Post an answer's ``messages``: the first replaces the message ``replace_ts`` (the
        "thinking" one) when given, the rest follow in the thread ``thread_ts`` (the first
        message's own thread when it started one)."""
        for number, blocks in enumerate(messages):
            shown = message_text(blocks, text if number == 0 else CONTINUED) or CONTINUED
            if number == 0 and replace_ts:
                self.update(channel, replace_ts, text=shown, blocks=blocks)
                thread_ts = thread_ts or replace_ts
            else:
                posted = self.post(channel, text=shown, blocks=blocks, thread_ts=thread_ts)
                thread_ts = thread_ts or posted

    @staticmethod
    def _call(method: Callable[..., SlackResponse], **arguments: Any) -> SlackResponse:
        given = {key: value for key, value in arguments.items() if value is not None}
        name = getattr(method, "__name__", "call").replace("_", ".", 1)
        try:
            return method(**given)
        except SlackApiError as error:
            code = str(error.response.get("error") or f"http_{error.response.status_code}")
            raise SlackApiFailed(f"Slack refused {name}: {code}", error=code) from None
        except Exception as error:  # urllib's errors, timeouts, a bad proxy
            raise SlackApiFailed(
                f"Slack's Web API could not be reached for {name}: {error}", error="unreachable"
            ) from None
