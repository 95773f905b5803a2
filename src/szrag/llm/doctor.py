"""``check_provider``: does the configured model provider work, and what to change if not.

Each check is a real request to the provider, in order, stopping where nothing after could
work: the configuration, whether the server answers and accepts the key (``GET /models``),
whether the model is listed, a one-word completion, whether replies stream, whether the
model calls a tool (streamed, else unstreamed, as answering would fall back), and whether tool
rounds stream. A model the list does not name that answers all the same is reported as such:
the server answers any name (llama.cpp's does) with the model it loaded.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import httpx

from szrag.base.errors import ProviderError
from szrag.base.settings import CHAT_COMPLETIONS_PATH, Settings, key_route
from szrag.llm.client import ChatClient, forget_learned_behaviour, request_body
from szrag.llm.errors import StreamCutError, context_overflow, error_detail
from szrag.llm.stream import read_events

OK = "ok"
WARN = "warn"
FAIL = "fail"
PING_TOOL = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Check that the service is up. Always call it when asked to ping.",
        "parameters": {"type": "object", "properties": {}},
    },
}


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, how it went, what was seen, and what to change."""

    name: str
    status: str  # ok, warn or fail
    detail: str
    hint: str | None = None


def models_url(settings: Settings) -> str:
    """The ``/models`` URL next to the chat-completions endpoint."""
    return settings.endpoint.removesuffix(CHAT_COMPLETIONS_PATH) + "/models"


async def check_provider(
    settings: Settings, *, http_client: httpx.AsyncClient | None = None
) -> list[Check]:
    """Every check, in order; the first failure that makes the rest pointless ends the list."""
    checks = [
        Check(
            "configuration",
            OK if settings.has_key else FAIL,
            f"{key_route(settings)}, model {settings.ai_model}",
            None
            if settings.has_key
            else "set AI_API_KEY (or OPENAI_API_KEY); a local server takes any value",
        )
    ]
    if not settings.has_key:
        return checks
    # a doctor looks afresh: nothing learned earlier in this process is assumed
    forget_learned_behaviour()
    quick = dataclasses.replace(settings, retries=0, max_tokens=settings.max_tokens or 16)
    async with _client(http_client) as client:
        listed, offered = await _check_models(client, quick)
        checks.extend(listed)
        if any(check.status == FAIL for check in listed):
            return checks
        chat = ChatClient(quick, http_client=client)
        try:
            reply = await chat.complete([{"role": "user", "content": "Reply with the word OK."}])
        except ProviderError as error:
            checks.append(Check("completion", FAIL, error.message, _hint_for(error)))
            return checks
        if offered:  # an unlisted name was answered all the same
            checks[checks.index(listed[-1])] = _answers_any_name(quick.ai_model, offered)
        checks.append(Check("completion", OK, f"answered {reply.text.strip()[:60]!r}"))
        checks.append(await _check_streaming(client, quick))
        tools = await _check_tools(chat)
        checks.append(tools)
        if tools.status != FAIL:
            checks.append(_check_tool_streaming(chat))
    return checks


def _answers_any_name(model: str, offered: Sequence[str]) -> Check:
    """The model check when the server answered a name it does not list."""
    names = ", ".join(offered[:10])
    which = names if len(offered) == 1 else f"one of {names}"
    return Check(
        "model listed",
        WARN,
        f"{model} is not among {names}, yet the server answered to it: it answers any model"
        f" name (llama.cpp's server does), so the answers come from {which}",
        f"set AI_MODEL to {offered[0]} so that answers and logs name the model that answers",
    )


def _check_tool_streaming(chat: ChatClient) -> Check:
    """Whether tool rounds stream, learned by the tool check as answering would learn it."""
    if chat.streams_tool_rounds:
        return Check("tool streaming", OK, "tool rounds stream")
    return Check(
        "tool streaming",
        WARN,
        "the server cannot stream a request that offers tools: tool rounds are asked"
        " unstreamed, so no text arrives until a round's whole reply is ready",
        "a slow model may need SZRAG_AI_READ_TIMEOUT raised; SZRAG_TOOLS=0 (or `szrag ask"
        " --no-tools`) streams every answer",
    )


@contextlib.asynccontextmanager
async def _client(given: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """The caller's HTTP client, or one of our own for the checks."""
    if given is not None:
        yield given
        return
    async with httpx.AsyncClient() as own:
        yield own


def _headers(settings: Settings) -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.ai_api_key}"} if settings.ai_api_key else {}


async def _check_models(
    client: httpx.AsyncClient, settings: Settings
) -> tuple[list[Check], list[str]]:
    """The reachability, key and model checks, and the models offered when the configured
    one is not among them (else empty)."""
    url = models_url(settings)
    timeout = httpx.Timeout(settings.read_timeout, connect=settings.connect_timeout)
    try:
        response = await client.get(url, headers=_headers(settings), timeout=timeout)
    except httpx.HTTPError as error:
        unreachable = Check(
            "reachable",
            FAIL,
            f"{url}: {error or type(error).__name__}",
            "is the server running and AI_URL right? a local server usually ends in /v1",
        )
        return [unreachable], []
    if response.status_code in (401, 403):
        refused = Check(
            "key",
            FAIL,
            f"HTTP {response.status_code}: {error_detail(response.content) or 'refused'}",
            "the provider rejected AI_API_KEY",
        )
        return [Check("reachable", OK, f"{url} answered"), refused], []
    if not response.is_success:
        return [
            Check("reachable", OK, f"{url} answered HTTP {response.status_code}"),
            Check("model listed", WARN, "the server offers no model list; trying the model"),
        ], []
    names = _model_names(response)
    found = [
        Check("reachable", OK, f"{url} answered"),
        Check("key", OK, "accepted"),
    ]
    if names is None or settings.ai_model in names:
        found.append(
            Check("model listed", OK if names else WARN, settings.ai_model if names else "no list")
        )
        return found, []
    offered = sorted(names)
    found.append(
        Check(
            "model listed",
            WARN,
            f"{settings.ai_model} is not among {', '.join(offered[:10]) or 'none'}",
            "set AI_MODEL (or `szrag ask -m`) to one of the listed models",
        )
    )
    return found, offered


def _model_names(response: httpx.Response) -> set[str] | None:
    try:
        payload = response.json()
    except ValueError:
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return {str(item["id"]) for item in data if isinstance(item, dict) and "id" in item}


async def _check_streaming(client: httpx.AsyncClient, settings: Settings) -> Check:
    body = request_body(
        settings.ai_model,
        [{"role": "user", "content": "Reply with the word OK."}],
        max_tokens=settings.max_tokens,
    )
    timeout = httpx.Timeout(settings.read_timeout, connect=settings.connect_timeout)
    try:
        async with client.stream(
            "POST", settings.endpoint, json=body, headers=_headers(settings), timeout=timeout
        ) as response:
            if not response.is_success:
                detail = error_detail(await response.aread())
                return Check("streaming", WARN, f"HTTP {response.status_code}: {detail}")
            events = 0
            try:
                async for _ in read_events(response):
                    events += 1
            except StreamCutError:
                if events:
                    raise
    except (httpx.HTTPError, ProviderError) as error:
        return Check("streaming", WARN, f"the stream failed: {error}", "answers arrive whole")
    if not events:
        return Check("streaming", WARN, "an empty stream", "answers are asked unstreamed")
    return Check("streaming", OK, f"{events} events")


async def _check_tools(chat: ChatClient) -> Check:
    messages = [{"role": "user", "content": "Ping the service: call the ping tool now."}]
    try:
        reply = await chat.complete(messages, tools=[PING_TOOL])
    except ProviderError as error:
        return Check(
            "tool calls",
            FAIL,
            error.message,
            "set SZRAG_TOOLS=0 (or `szrag ask --no-tools`) to answer without live tools",
        )
    if any(call.name == "ping" for call in reply.tool_calls):
        return Check("tool calls", OK, "the model called the ping tool")
    return Check(
        "tool calls",
        WARN,
        f"the model answered without calling the tool ({reply.text.strip()[:60]!r})",
        "small models often ignore tools; SZRAG_TOOLS=0 saves the round",
    )


def _hint_for(error: ProviderError) -> str | None:
    code = getattr(error, "code", "")
    if getattr(error, "dropped", False):  # it took the request: the URL is right
        return "the server took the request and hung up: its log says why (a crash? memory?)"
    overflow = context_overflow(error)
    if overflow is not None:
        reported = f" (the provider reported {overflow.window})" if overflow.window else ""
        return (
            "the model's context window is too small even for a one-line request: start the"
            f" server with a larger one{reported}, and set SZRAG_CONTEXT_WINDOW to it"
        )
    return {
        "auth": "the provider rejected AI_API_KEY",
        "not_found": "check AI_URL (it usually ends in /v1) and AI_MODEL",
        "connection": "is the server running and AI_URL right?",
        "timeout": "the model is slow or stuck: raise SZRAG_AI_READ_TIMEOUT or try a smaller model",
        "bad_request": "the provider refused the request as invalid: its message names what",
    }.get(str(code))


def format_checks(checks: Sequence[Check]) -> str:
    """The checks as lines a terminal shows: a mark, the check, what was seen, what to do."""
    marks = {OK: "ok  ", WARN: "warn", FAIL: "FAIL"}
    lines = []
    for check in checks:
        lines.append(f"{marks[check.status]}  {check.name}: {check.detail}")
        if check.hint:
            lines.append(f"      -> {check.hint}")
    return "\n".join(lines)


def verdict(checks: Sequence[Check]) -> bool:
    """True when nothing failed."""
    return all(check.status != FAIL for check in checks)


__all__ = ["Check", "check_provider", "format_checks", "verdict"]
