"""The OpenAI-compatible chat-completions client: one streamed request, retried when worth it.

Requests ask for a stream and for usage. A 429 or 5xx answer is retried a bounded number of
times with exponential backoff (a ``Retry-After`` header is honoured, up to the configured cap);
every other failure becomes the matching :mod:`szrag.llm.errors` class at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from szrag.base.errors import ProviderError
from szrag.base.settings import Settings
from szrag.llm.errors import (
    ProviderConnectionError,
    ProviderTimeoutError,
    ReplyTooLargeError,
    StreamCutError,
    names_streaming_tools,
    says_request_is_invalid,
    status_error,
)
from szrag.llm.stream import (
    Deadline,
    MarkerFilter,
    ModelReply,
    ReplyBuilder,
    StreamEvent,
    TextDelta,
    read_events,
)

log = logging.getLogger("szrag.llm")

Sleep = Callable[[float], Awaitable[None]]
OnText = Callable[[str], Awaitable[None] | None]
Message = Mapping[str, Any]


def request_body(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    stream: bool = True,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The JSON body of one chat-completions request (streamed unless ``stream`` is off)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [dict(message) for message in messages],
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if max_tokens:
        body["max_tokens"] = max_tokens
    if tools:
        body["tools"] = [dict(tool) for tool in tools]
        body["tool_choice"] = "auto"
    return body


# (endpoint, model) pairs that answered a streamed request with tools by failing or with an
# empty body: their tool rounds are asked unstreamed for the life of the process
_UNSTREAMED_TOOLS: set[tuple[str, str]] = set()


def forget_learned_behaviour() -> None:
    """Forget which providers cannot stream tool rounds (tests, a provider that changed)."""
    _UNSTREAMED_TOOLS.clear()


def is_retryable(status: int) -> bool:
    """Whether an HTTP status is worth another attempt (rate limits, server failures)."""
    return status == 429 or status >= 500


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date)."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def backoff_delay(attempt: int, settings: Settings, retry_after: float | None = None) -> float:
    """The wait before retry number ``attempt`` (0-based), never above the configured cap."""
    delay = retry_after if retry_after is not None else settings.retry_delay * (2**attempt)
    return min(delay, settings.retry_max_delay)


class ChatClient:
    """Sends chat-completions requests to the configured provider and reads the replies."""

    def __init__(
        self,
        settings: Settings,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._http_client = http_client
        self._sleep = sleep

    @property
    def endpoint(self) -> str:
        """The chat-completions URL requests go to."""
        return self.settings.endpoint

    @property
    def streams_tool_rounds(self) -> bool:
        """False once this endpoint and model were found unable to stream a request with tools."""
        return (self.endpoint, self.settings.ai_model) not in _UNSTREAMED_TOOLS

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        on_text: OnText | None = None,
    ) -> ModelReply:
        """One request, read to the end; ``on_text`` sees the answer text as it arrives."""
        builder = ReplyBuilder()
        shown = MarkerFilter()
        limit = self.settings.max_reply_chars
        try:
            async with contextlib.aclosing(self.events(messages, tools=tools)) as events:
                async for event in events:
                    builder.add(event)
                    if len(builder.raw_text) > limit:
                        raise ReplyTooLargeError(
                            f"the model's answer grew past {limit} characters"
                            " (SZRAG_AI_MAX_REPLY_CHARS)"
                        )
                    if on_text is not None and isinstance(event, TextDelta):
                        await _call(on_text, shown.feed(event.text))
        except ProviderError as error:
            error.partial_text = builder.raw_text[:limit]  # kept, and shown as cut
            raise
        if on_text is not None:
            await _call(on_text, shown.flush())
        names = {_tool_name(tool) for tool in tools or ()}
        return builder.build(tool_names=names - {""})

    async def events(
        self, messages: Sequence[Message], *, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        """The typed events of one request's reply, in the order they arrive.

        A streamed request whose reply carries no event at all (some servers answer 200 with
        an empty body when they cannot stream, or fail silently) is asked once more unstreamed,
        so the answer or the provider's own error arrives; when tools were offered, or the
        provider said it cannot stream them, its tool rounds are unstreamed from then on. A
        server that hung up before its first event and fails the retry too is said to have
        closed the connection (it took the request, so the URL is right; it may have died).
        """
        key = (self.endpoint, self.settings.ai_model)
        deadline = Deadline(self.settings.total_timeout)
        stream = not (tools and key in _UNSTREAMED_TOOLS)
        hung_up = False  # the streamed request was cut after its headers, before any event
        async with self._client() as client:
            if stream:
                try:
                    response = await self._open(client, self._body(messages, tools, stream=True))
                except ProviderError as error:
                    cannot_stream = names_streaming_tools(error) or getattr(error, "dropped", False)
                    if not (tools and cannot_stream):
                        raise
                    log.info("%s cannot stream tool rounds (%s); asking unstreamed", key, error)
                    _UNSTREAMED_TOOLS.add(key)
                    hung_up = bool(getattr(error, "dropped", False))
                else:
                    seen = 0
                    try:
                        async for event in self._read(response, deadline):
                            seen += 1
                            yield event
                    except StreamCutError:
                        if seen:
                            raise
                        hung_up = True
                    if seen:
                        return
                    log.info("%s sent an empty stream; asking once more unstreamed", key)
                    if tools:
                        _UNSTREAMED_TOOLS.add(key)
            body = self._body(messages, tools, stream=False)
            if stream:  # the server may have dropped the pooled connection: ask on a new one
                async with httpx.AsyncClient() as fresh:
                    seen = 0
                    try:
                        response = await self._open(fresh, body)
                        async for event in self._read(response, deadline):
                            seen += 1
                            yield event
                    except (ProviderConnectionError, StreamCutError) as error:
                        if not hung_up or seen:
                            raise
                        raise self._hung_up(error) from None
                return
            response = await self._open(client, body)
            async for event in self._read(response, deadline):
                yield event

    def _hung_up(self, again: ProviderError) -> ProviderConnectionError:
        """The error for a server that took the request, sent its headers and hung up before
        the first event, then failed the retry too: the URL was right, the server went away."""
        then = (
            "hung up again when asked unstreamed"
            if isinstance(again, StreamCutError) or getattr(again, "dropped", False)
            else "then could not be reached"
        )
        error = ProviderConnectionError(
            f"the model provider at {self.endpoint} closed the connection after accepting the"
            f" request, before sending any of its reply, and {then}: it may have crashed or run"
            " out of memory (its own log says which)"
        )
        error.dropped = True
        return error

    def _body(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        return request_body(
            self.settings.ai_model,
            messages,
            tools,
            stream=stream,
            max_tokens=self.settings.max_tokens,
        )

    async def _read(
        self, response: httpx.Response, deadline: Deadline
    ) -> AsyncGenerator[StreamEvent, None]:
        """The events of an open response, transport failures named; always closes it."""
        try:
            async with contextlib.aclosing(
                read_events(
                    response,
                    deadline=deadline,
                    max_bytes=self.settings.max_reply_chars * 4 + 65536,
                )
            ) as events:
                async for event in events:
                    yield event
        except httpx.TimeoutException:
            raise ProviderTimeoutError(
                f"the model provider sent nothing for {self.settings.read_timeout:g} seconds",
            ) from None
        except httpx.TransportError as error:
            raise StreamCutError(
                f"the connection to the model provider broke mid-reply ({_describe(error)})"
            ) from None
        finally:
            await response.aclose()

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._http_client is not None:
            yield self._http_client
            return
        async with httpx.AsyncClient() as client:
            yield client

    def _timeout(self) -> httpx.Timeout:
        connect = self.settings.connect_timeout
        return httpx.Timeout(self.settings.read_timeout, connect=connect, pool=connect)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream, application/json"}
        if self.settings.ai_api_key:
            headers["Authorization"] = f"Bearer {self.settings.ai_api_key}"
        return headers

    async def _open(self, client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
        """A response with a success status, after any retries; failures raise."""
        attempt = 0
        while True:
            request = self._request(client, body)
            response = await self._send(client, request)
            if response.is_success:
                return response
            try:
                detail = await response.aread()
            except httpx.HTTPError:  # the status says enough when the body cannot be read
                detail = b""
            finally:
                await response.aclose()
            if (
                not is_retryable(response.status_code)
                or attempt >= self.settings.retries
                or says_request_is_invalid(detail)  # the same request would fail the same way
            ):
                raise status_error(response.status_code, detail, endpoint=self.endpoint)
            wait = backoff_delay(
                attempt, self.settings, retry_after_seconds(response.headers.get("retry-after"))
            )
            log.info(
                "model provider answered %d; retry %d of %d in %.2fs",
                response.status_code,
                attempt + 1,
                self.settings.retries,
                wait,
            )
            await self._sleep(wait)
            attempt += 1

    def _request(self, client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Request:
        try:
            return client.build_request(
                "POST", self.endpoint, json=body, headers=self._headers(), timeout=self._timeout()
            )
        except (httpx.InvalidURL, UnicodeError) as error:
            raise ProviderConnectionError(
                f"the model provider URL {self.endpoint!r} is not valid ({_describe(error)}):"
                " check AI_URL"
            ) from None

    async def _send(self, client: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
        try:
            return await client.send(request, stream=True)
        except httpx.UnsupportedProtocol as error:
            raise ProviderConnectionError(
                f"the model provider URL {self.endpoint!r} is not an http(s) URL"
                f" ({_describe(error)}): check AI_URL"
            ) from None
        except httpx.ConnectTimeout:
            raise ProviderTimeoutError(
                f"could not connect to the model provider at {self.endpoint} within "
                f"{self.settings.connect_timeout:g} seconds"
            ) from None
        except httpx.TimeoutException:
            raise ProviderTimeoutError(
                f"the model provider at {self.endpoint} did not answer within "
                f"{self.settings.read_timeout:g} seconds"
            ) from None
        except httpx.ConnectError as error:
            raise ProviderConnectionError(
                f"could not connect to the model provider at {self.endpoint} ({_describe(error)}):"
                " check AI_URL"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            # the server took the request and hung up without answering: llama.cpp's server
            # does so when it cannot stream a request that offers tools
            dropped = ProviderConnectionError(
                f"the model provider at {self.endpoint} closed the connection without"
                f" answering ({_describe(error)})"
            )
            dropped.dropped = True
            raise dropped from None
        except httpx.TransportError as error:
            raise ProviderConnectionError(
                f"the connection to the model provider at {self.endpoint} failed"
                f" ({_describe(error)})"
            ) from None


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return name if isinstance(name, str) else ""


def _describe(error: Exception) -> str:
    return str(error) or type(error).__name__


async def _call(callback: OnText, text: str) -> None:
    if not text:
        return
    result = callback(text)
    if result is not None:
        await result
