"""The web page in a real headless Chromium: ask a question against the fixture repository and
the scripted provider, and see the streamed answer, sources, images, activities and usage.

The browser is Debian's ``chromium``, driven through ``chromedriver`` by the small W3C
WebDriver client below (plain JSON over HTTP with httpx): no browser is ever downloaded."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from szrag.answer import Evidence, local_answer
from szrag.base.settings import Settings
from szrag.context.pack import pack_chunks
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.rank.retrieve import Source
from szrag.server import RateLimit, ServerSettings

StartServer = Callable[..., str]


# A minimal WebDriver client -------------------------------------------------------------

ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER_CANDIDATES = ("/usr/bin/chromedriver",)
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1200,900",
)

T = TypeVar("T")


class WebDriverError(RuntimeError):
    """chromedriver answered with an error."""


def find_binary(candidates: tuple[str, ...], name: str) -> str | None:
    """The first existing candidate path, or ``name`` on PATH, or None."""
    for candidate in candidates:
        if Path(candidate).exists():
            return candidate
    return shutil.which(name)


def chromium_binaries() -> tuple[str, str] | None:
    """``(chromium, chromedriver)`` when both are installed."""
    browser = find_binary(CHROMIUM_CANDIDATES, "chromium")
    driver = find_binary(CHROMEDRIVER_CANDIDATES, "chromedriver")
    return (browser, driver) if browser and driver else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Element:
    """A handle on one DOM element of a session."""

    def __init__(self, session: Session, element_id: str) -> None:
        self.session = session
        self.id = element_id

    def _path(self, suffix: str) -> str:
        return f"/element/{self.id}/{suffix}"

    @property
    def text(self) -> str:
        """The rendered text of the element."""
        return str(self.session.command("GET", self._path("text")))

    def attribute(self, name: str) -> str | None:
        """A DOM attribute value."""
        value = self.session.command("GET", self._path(f"attribute/{name}"))
        return None if value is None else str(value)

    def click(self) -> None:
        """Click the element."""
        self.session.command("POST", self._path("click"), {})

    def send_keys(self, text: str) -> None:
        """Type ``text`` into the element."""
        self.session.command("POST", self._path("value"), {"text": text})

    def clear(self) -> None:
        """Empty an input or textarea."""
        self.session.command("POST", self._path("clear"), {})


class Session:
    """One browser session: every command goes to chromedriver's HTTP endpoint."""

    def __init__(self, http: httpx.Client, session_id: str) -> None:
        self.http = http
        self.id = session_id

    def command(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        """Send one WebDriver command and return its ``value``."""
        response = self.http.request(method, f"/session/{self.id}{path}", json=payload)
        value = response.json().get("value")
        if response.status_code >= 400:
            message = value.get("message", "") if isinstance(value, dict) else value
            raise WebDriverError(f"{method} {path}: {response.status_code} {message}")
        return value

    def open(self, url: str) -> None:
        """Navigate to ``url`` and wait for the load event."""
        self.command("POST", "/url", {"url": url})

    def find(self, css: str) -> Element:
        """The first element matching ``css`` (an error when there is none)."""
        value = self.command("POST", "/element", {"using": "css selector", "value": css})
        return Element(self, value[ELEMENT_KEY])

    def find_all(self, css: str) -> list[Element]:
        """Every element matching ``css``."""
        values = self.command("POST", "/elements", {"using": "css selector", "value": css})
        return [Element(self, value[ELEMENT_KEY]) for value in values]

    def script(self, source: str, *args: Any) -> Any:
        """Run ``source`` as a function body in the page and return its result."""
        return self.command("POST", "/execute/sync", {"script": source, "args": list(args)})

    def wait(self, condition: Callable[[], T | None], timeout: float = 10.0, what: str = "") -> T:
        """Poll ``condition`` until it returns something truthy; its value is returned."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                value = condition()
            except WebDriverError as error:
                last_error, value = error, None
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"timed out waiting for {what or condition}: {last_error or 'no match'}")

    def logs(self) -> list[dict[str, Any]]:
        """The browser console entries (errors of scripts included)."""
        try:
            entries = self.http.post(f"/session/{self.id}/se/log", json={"type": "browser"}).json()
        except (httpx.HTTPError, ValueError):
            return []
        value = entries.get("value")
        return value if isinstance(value, list) else []


@contextlib.contextmanager
def chromium_session(binaries: tuple[str, str]) -> Iterator[Session]:
    """Start chromedriver and a headless chromium with a fresh profile; quit both afterwards."""
    browser, driver = binaries
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="szrag-chromium-") as profile:
        process = subprocess.Popen(
            [driver, f"--port={port}", "--allowed-ips=127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30.0) as http:
                _wait_ready(http, process)
                capabilities = {
                    "capabilities": {
                        "alwaysMatch": {
                            "browserName": "chrome",
                            "goog:chromeOptions": {
                                "binary": browser,
                                "args": [*CHROMIUM_ARGS, f"--user-data-dir={profile}"],
                            },
                            "goog:loggingPrefs": {"browser": "ALL"},
                        }
                    }
                }
                response = http.post("/session", json=capabilities)
                value = response.json()["value"]
                if response.status_code >= 400:
                    raise WebDriverError(f"cannot start chromium: {value.get('message', value)}")
                session = Session(http, value["sessionId"])
                try:
                    yield session
                finally:
                    with contextlib.suppress(httpx.HTTPError):
                        http.delete(f"/session/{session.id}")
        finally:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(http: httpx.Client, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise WebDriverError(f"chromedriver exited with {process.returncode}")
        with contextlib.suppress(httpx.HTTPError, ValueError):
            if http.get("/status").json()["value"]["ready"]:
                return
        time.sleep(0.05)
    raise WebDriverError("chromedriver did not become ready")


# The tests ---------------------------------------------------------------------------

BINARIES = chromium_binaries()
if BINARIES is None and not os.environ.get("CI"):
    pytest.skip(
        "chromium and chromedriver are not installed (apt-get install chromium chromium-driver); "
        "CI always runs this test",
        allow_module_level=True,
    )

QUESTION = "How does the gateway rate limiting token bucket work? Show the architecture diagram."
ANSWER = (
    "## Token bucket\n\n"
    "Each client gets **ten** tokens, refilled at one per second [README.md:5-8].\n\n"
    "- `takeToken()` spends one\n- an empty bucket answers `429`\n\n"
    "<script>window.injected = true</script>"
)

# Records every distinct text of the answer element while it streams.
WATCH_ANSWER = """
window.answerStates = [];
const thread = document.getElementById('thread');
new MutationObserver(() => {
  const answer = thread.querySelector('.turn:last-child .answer');
  const text = answer ? answer.textContent : '';
  if (text && window.answerStates[window.answerStates.length - 1] !== text) {
    window.answerStates.push(text);
  }
}).observe(thread, {childList: true, subtree: true, characterData: true});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Session]:
    assert BINARIES is not None, "CI must install chromium and chromium-driver"
    with chromium_session(BINARIES) as session:
        yield session


def ask(browser: Session, base_url: str, question: str = QUESTION, *, watch: bool = False) -> None:
    browser.open(f"{base_url}/")
    if watch:
        browser.script(WATCH_ANSWER)
    field = browser.find("#question")
    field.clear()
    field.send_keys(question)
    browser.find("#ask").click()


def notice(browser: Session) -> tuple[str, str]:
    kind = browser.script("return document.getElementById('notice').dataset.kind || ''")
    text = browser.script(
        "return document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent"
    )
    return str(kind), str(text)


def test_a_question_streams_the_answer_sources_images_and_activities(
    browser: Session, start_server: StartServer, provider: ScriptedProvider
) -> None:
    usage = {"prompt_tokens": 321, "completion_tokens": 45}
    provider.script(
        dataclasses.replace(text_reply(ANSWER, pieces=8, usage=usage), chunk_delay=0.08)
    )
    base = start_server()

    ask(browser, base, watch=True)

    browser.wait(
        lambda: "Tokens:" in browser.find("#thread .turn:last-child .usage").text,
        what="the usage line",
    )
    html = browser.script(
        "return document.querySelector('#thread .turn:last-child .answer').innerHTML"
    )
    assert "<h2>Token bucket</h2>" in html and "<strong>ten</strong>" in html
    assert "<code>takeToken()</code>" in html
    assert "&lt;script&gt;" in html and browser.script("return window.injected === undefined")
    states = browser.script("return window.answerStates")
    assert len(states) >= 3, f"the answer did not stream: {states}"
    assert browser.find("#thread .turn:last-child .usage").text.startswith(
        "Tokens: 321 in · 45 out · 366 total"
    )

    sources = browser.find_all("#thread .turn:last-child .sources li")
    labels = [item.text for item in sources]
    assert labels and labels[0].startswith("docs/architecture.md:1-5")
    snippet = browser.find("#thread .turn:last-child .sources li pre")
    assert not snippet.text  # collapsed until opened
    browser.find("#thread .turn:last-child .sources li summary").click()
    # opened, the excerpt may be drawn again: read it once it is there
    browser.wait(
        lambda: (
            "pass the rate limiter" in browser.find("#thread .turn:last-child .sources li pre").text
        ),
        what="the opened excerpt",
    )

    browser.find("#thread .turn:last-child .activity-section summary").click()
    rows = browser.find_all("#thread .turn:last-child .activities li")
    stages = [row.attribute("data-stage") for row in rows]
    assert stages[0] == "retrieval" and "context" in stages
    assert rows[0].text.startswith("+0 ms")
    assert all(row.text.startswith("+") for row in rows)
    durations = browser.script(
        "return [...document.querySelectorAll('#thread .turn:last-child .activities .duration')].map(e => e.textContent)"
    )
    assert any(duration.endswith("ms") or duration.endswith(" s") for duration in durations)

    image_ok = browser.wait(
        lambda: browser.script(
            "const img = document.querySelector('#thread .turn:last-child .images img'); return img && img.complete && img.naturalWidth > 0"
        ),
        what="the image thumbnail",
    )
    assert image_ok
    assert (
        "docs/diagrams/architecture-diagram.png"
        in browser.find("#thread .turn:last-child .images figcaption").text
    )
    assert notice(browser) == ("", "")


def test_no_key_and_rate_limit_states_are_shown(
    browser: Session, start_server: StartServer
) -> None:
    base = start_server(
        answer_settings=Settings(ai_api_key=None), ask_rate=RateLimit(per_minute=1, burst=1)
    )

    browser.open(f"{base}/")
    state = browser.wait(
        lambda: browser.script("return document.getElementById('model-state').dataset.model"),
        what="the model state in the header",
    )
    assert state == "missing"
    assert "No model is configured" in browser.find("#model-state").text
    assert browser.script("return document.getElementById('with-ai').checked") is False
    assert browser.script("return document.getElementById('with-ai').disabled") is True
    field = browser.find("#question")
    field.send_keys(QUESTION)
    browser.find("#ask").click()
    browser.wait(lambda: notice(browser)[0] == "info", what="the retrieval-only notice")
    assert "without the model" in notice(browser)[1]
    assert browser.find_all("#thread .turn:last-child .sources li")

    ask(browser, base)
    browser.wait(lambda: notice(browser)[0] == "ratelimit", what="the rate-limit notice")
    assert "Try again in" in notice(browser)[1]


def test_a_token_is_asked_for_and_used(browser: Session, start_server: StartServer) -> None:
    base = start_server(
        api_tokens=frozenset({"page-token"}), answer_settings=Settings(ai_api_key=None)
    )

    ask(browser, base)
    browser.wait(lambda: notice(browser)[0] == "error", what="the access notice")
    assert "Access denied" in notice(browser)[1]
    assert browser.script("return document.getElementById('token-box').open") is True

    browser.find("#token").send_keys("page-token")
    browser.find("#ask").click()
    browser.wait(
        lambda: browser.find_all("#thread .turn:last-child .sources li"),
        what="sources after the token",
    )
    image = browser.wait(
        lambda: browser.script(
            "const img = document.querySelector('#thread .turn:last-child .images img'); "
            "return img && img.complete && img.naturalWidth > 0 && img.src"
        ),
        what="an image loaded with the token",
    )
    assert str(image).startswith("blob:")
    browser.script("localStorage.clear()")


def test_markdown_rendering_is_safe(browser: Session, server: str) -> None:
    browser.open(f"{server}/")
    rendered = browser.script(
        "const out = document.createElement('div');"
        "out.innerHTML = window.SzragMarkdown.render(arguments[0]);"
        "return {html: out.innerHTML, images: out.querySelectorAll('img').length,"
        " links: [...out.querySelectorAll('a')].map(a => a.getAttribute('href'))};",
        '<img src=x onerror="window.bad=1"> [x](javascript:alert(1)) [ok](https://example.org/a_b_c) '
        '[q](" onmouseover="alert(1)) **b** `<i>`',
    )

    assert rendered["images"] == 0
    assert rendered["links"] == ["https://example.org/a_b_c"]
    assert "<strong>b</strong>" in rendered["html"] and "<code>&lt;i&gt;</code>" in rendered["html"]
    assert browser.script("return window.bad === undefined")


def test_an_answer_without_a_model_shows_its_excerpts_as_numbered_code_blocks(
    browser: Session, server: str
) -> None:
    source = Source(
        "app/run.py",
        12,
        14,
        "python",
        "run",
        "def run(**options):\n    return start(**options)\n",
        9,
    )
    answer = local_answer(
        "No model is configured.",
        Evidence((source,), (), None, pack_chunks([])),
        None,
        "run options",
    )
    browser.open(f"{server}/")
    rendered = browser.script(
        "const out = document.createElement('div');"
        "out.innerHTML = window.SzragMarkdown.render(arguments[0]);"
        "return {blocks: [...out.querySelectorAll('pre code')].map(c => c.textContent),"
        " strong: out.querySelectorAll('strong').length, items: out.querySelectorAll('li').length};",
        answer,
    )
    # the numbered lines stay lines of code: no paragraph, no bold made of `**options`
    assert rendered["blocks"] == [
        "12 | def run(**options):\n13 |     return start(**options)\n14 | "
    ]
    assert rendered["strong"] == 0 and rendered["items"] == 1


def test_the_page_logs_no_script_errors(browser: Session, server: str) -> None:
    browser.logs()  # drop what earlier tests left (their 401 and 429 answers)
    browser.open(f"{server}/")
    browser.find("#question")

    severe = [entry for entry in browser.logs() if entry.get("level") == "SEVERE"]
    assert severe == []


# The page as a product: widths, citations, highlighted sources, the header ------------------

ARTIFACTS = Path(os.environ.get("SZRAG_TEST_ARTIFACTS", Path(__file__).parents[2] / ".artifacts"))
CITING_ANSWER = (
    "The bucket is refilled in `src/gateway.js:6-15` and explained in [the docs]"
    "(docs/architecture.md); see also docs/architecture.md:1-4, `__init__.py` and "
    "[the changelog](CHANGELOG.md).\n\n```js\nconst veryLongLineThatWouldOverflowANarrowScreen"
    " = takeToken(request.ip) && anotherCallWithALongName(request.headers['x-client-id']);\n```"
)
# Every element's right edge, outside the boxes that scroll on their own (code, tables).
OVERFLOWING = """
const width = document.documentElement.clientWidth;
const scrolls = (element) => {
  for (let node = element.parentElement; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (['auto', 'scroll', 'hidden'].includes(style.overflowX) && node.scrollWidth > node.clientWidth) return true;
  }
  return false;
};
const wide = [...document.querySelectorAll('body *')].filter((element) => {
  const box = element.getBoundingClientRect();
  return box.width > 0 && box.right > width + 1 && !scrolls(element);
}).map((element) => element.tagName + '.' + element.className);
return {scrollWidth: document.documentElement.scrollWidth, width: width, wide: wide};
"""


# Whether a copy button covers the first line of its code block, and each source's location
# (path:start-end) that is broken over more than one line.
COVERED = """
const covered = [...document.querySelectorAll('#thread .code-box')].filter((box) => {
  const button = box.querySelector('button.copy').getBoundingClientRect();
  const line = box.querySelector('.line');
  let first;
  if (line) {
    first = line.getBoundingClientRect();
  } else {
    const walker = document.createTreeWalker(box.querySelector('pre'), NodeFilter.SHOW_TEXT);
    const text = walker.nextNode();
    const range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(text, 1);
    first = range.getBoundingClientRect();
  }
  return button.bottom > first.top && button.top < first.bottom;
}).map((box) => box.textContent.slice(0, 40));
const broken = [...document.querySelectorAll('#thread .sources .location')].filter((location) => {
  const height = parseFloat(getComputedStyle(location).lineHeight);
  return location.getClientRects().length > 1 || location.getBoundingClientRect().height > height * 1.5;
}).map((location) => location.textContent);
return {covered: covered, broken: broken};
"""


def set_width(browser: Session, width: int) -> None:
    browser.command("POST", "/window/rect", {"width": width, "height": 900})


def screenshot(browser: Session, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / name
    target.write_bytes(base64.b64decode(browser.command("GET", "/screenshot")))
    return target


def ask_with_keyboard(browser: Session, question: str) -> None:
    field = browser.find("#question")
    field.clear()
    field.send_keys(question + "\ue009\ue007\ue000")  # Ctrl+Enter, then release Ctrl


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_fits_its_width_links_citations_and_highlights_sources(
    browser: Session,
    start_server: StartServer,
    provider: ScriptedProvider,
    web_repo: Path,
    width: int,
) -> None:
    base = start_server(repo_url="https://git.example/acme/web/blob/main")
    set_width(browser, width)
    try:
        browser.open(f"{base}/")
        browser.wait(
            lambda: browser.script("return document.getElementById('model-state').dataset.model"),
            what="the header",
        )
        assert web_repo.name in browser.find("#repository").text
        assert "Answers are written by" in browser.find("#model-state").text

        provider.script(text_reply(CITING_ANSWER, pieces=4))
        ask_with_keyboard(browser, QUESTION)  # submitted from the keyboard
        turn = "#thread .turn:last-child"
        browser.wait(
            lambda: browser.script(
                f"return document.querySelectorAll('{turn} .sources li').length"
            ),
            what="the sources",
        )
        citations = browser.script(
            f"return [...document.querySelectorAll('{turn} .answer a.citation')]"
            ".map(a => [a.textContent, a.getAttribute('href')])"
        )
        cited = {text: href for text, href in citations}
        assert "src/gateway.js:6-15" in cited and "docs/architecture.md:1-4" in cited
        assert "the docs" in cited  # a relative link to a source goes to that source
        links = browser.script(
            f"return [...document.querySelectorAll('{turn} .answer a:not(.citation)')]"
            ".map(a => a.href)"
        )
        assert links == ["https://git.example/acme/web/blob/main/CHANGELOG.md"]
        html = browser.script(f"return document.querySelector('{turn} .answer').innerHTML")
        assert "__init__.py" in html and "<strong>init</strong>" not in html

        overflow = browser.script(OVERFLOWING)
        assert overflow["scrollWidth"] <= overflow["width"], overflow
        assert overflow["wide"] == [], overflow
        layout = browser.script(COVERED)
        assert layout["covered"] == [], layout  # the copy button leaves the code readable
        assert layout["broken"] == [], layout  # a source's line range stays with its path
        shot = screenshot(browser, f"page-{width}.png")
        assert shot.stat().st_size > 10_000

        target = cited["src/gateway.js:6-15"]
        browser.find(f'{turn} .answer a.citation[href="{target}"]').click()
        item = target.lstrip("#")
        browser.wait(
            lambda: browser.script(
                f"return document.querySelector('#{item} .source-body').dataset.highlighted === 'done'"
            ),
            what="the cited source opened and highlighted",
        )
        lines = browser.script(
            f"return [...document.querySelectorAll('#{item} .line')].map(l => "
            "[l.querySelector('.number').textContent, l.querySelectorAll('.content span').length])"
        )
        # the source is the function the citation names (6-15), not a window from line 1
        assert lines[0][0] == "6" and any(spans > 0 for _, spans in lines)
        marked = browser.script(
            f"return [...document.querySelectorAll('#{item} .line.marked .number')]"
            ".map(n => Number(n.textContent))"
        )
        assert marked == list(range(6, 16))  # the cited lines
        view = browser.script(f"return document.querySelector('#{item} a.browse').href")
        assert re.fullmatch(r"https://git\.example/acme/web/blob/main/src/gateway\.js#L6-L15", view)
        assert browser.find_all(f"{turn} .code-box button.copy")
        overflow = browser.script(OVERFLOWING)
        assert overflow["wide"] == [], overflow
        layout = browser.script(COVERED)
        assert layout["covered"] == [], layout  # nor the source's first line
        screenshot(browser, f"page-{width}-source-open.png")
    finally:
        set_width(browser, 1200)


def test_a_follow_up_is_answered_in_the_same_conversation_and_feedback_is_kept(
    browser: Session, start_server: StartServer, provider: ScriptedProvider, web_repo: Path
) -> None:
    from szrag.conversations import ConversationStore

    base = start_server()
    browser.open(f"{base}/")
    provider.script(text_reply("Tokens are refilled in `src/gateway.js:6-15`.", pieces=2))
    ask_with_keyboard(browser, "How does the gateway refill its token bucket?")
    first = "#thread .turn:nth-child(1)"
    browser.wait(
        lambda: browser.script(f"return document.querySelector('{first}').dataset.answerId"),
        what="the first answer",
    )
    assert browser.script("return document.getElementById('new-conversation').hidden") is False

    provider.script(text_reply("It is called from the `/api/items` handler.", pieces=2))
    ask_with_keyboard(browser, "and where is that called from?")
    second = "#thread .turn:nth-child(2)"
    browser.wait(
        lambda: browser.script(f"return document.querySelector('{second}')?.dataset.answerId"),
        what="the follow-up's answer",
    )
    assert len(browser.find_all("#thread .turn")) == 2
    follow_up = provider.requests[-1].json["messages"]
    earlier = [message["content"] for message in follow_up if message["role"] != "system"]
    assert any("How does the gateway refill its token bucket?" in str(text) for text in earlier)
    assert any("src/gateway.js:6-15" in str(text) for text in earlier)  # the earlier answer

    browser.find(f'{second} button.rate[data-rating="down"]').click()
    browser.find(f"{second} .right-file").send_keys("gateway.js")
    browser.find(f"{second} button.send").click()
    state = browser.wait(
        lambda: browser.script(
            f"return document.querySelector('{second} .feedback').dataset.state"
        ),
        what="the feedback kept",
    )
    assert state == "failed"  # not an indexed path: the server says which one was meant
    assert "src/gateway.js" in browser.find(f"{second} .feedback-state").text
    field = browser.find(f"{second} .right-file")
    field.clear()
    field.send_keys("src/gateway.js")
    browser.find(f"{second} button.send").click()
    browser.wait(
        lambda: browser.script(
            f"return document.querySelector('{second} .feedback').dataset.state === 'kept'"
        ),
        what="the feedback kept",
    )
    kept = ConversationStore.for_root(web_repo).feedback()
    assert [(item.rating.value, item.right_files) for item in kept] == [
        ("down", ("src/gateway.js",))
    ]
    assert kept[0].question == "and where is that called from?"
    screenshot(browser, "page-1200-conversation.png")


# A server over several repositories: the picker, scoped sources and images -----------------

MAILER_FILES = {
    "src/welcome.py": "def send_welcome_email(user):\n"
    "    # the welcome e-mail every new user receives\n"
    "    return smtp_deliver(user.email, template='welcome')\n",
    "README.md": "# Mailer\n\nSends the welcome e-mail and the weekly digest.\n",
}
TURN = "#thread .turn:last-child"


@pytest.fixture
def several(web_repo: Path, tmp_path: Path) -> Iterator[str]:
    """A server over ``mailer`` (first) and ``web`` (the page fixture, with its image)."""
    mailer = tmp_path / "mailer"
    for relative, text in MAILER_FILES.items():
        (mailer / relative).parent.mkdir(parents=True, exist_ok=True)
        (mailer / relative).write_text(text, encoding="utf-8")
    yield from serve_repositories([f"mailer={mailer}", f"web={web_repo}"])


def serve_repositories(options: list[str]) -> Iterator[str]:
    """A server without a model over the repositories ``NAME=PATH``, for as long as it is
    iterated."""
    from szrag.commands import Allowlist
    from szrag.server import create_app
    from szrag.server.testing import serve_asgi
    from szrag.service.repositories import plan_from_options

    app = create_app(
        plan=plan_from_options(options),
        environ={"SZRAG_AUDIT_LOG": "off"},
        settings=ServerSettings(watch=False, sse_ping_seconds=5.0),
        answer_settings=Settings(ai_api_key=None),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with serve_asgi(app) as base_url:
        yield base_url


def picked(browser: Session) -> tuple[bool, list[str], str]:
    return (
        bool(browser.script("return document.getElementById('repository-choice').hidden")),
        list(
            browser.script(
                "return [...document.querySelectorAll('#repository-picker option')]"
                ".map(o => o.value + '=' + o.textContent)"
            )
        ),
        str(browser.script("return document.getElementById('repository-picker').value")),
    )


def choose(browser: Session, name: str) -> None:
    browser.script(
        "const picker = document.getElementById('repository-picker');"
        "picker.value = arguments[0]; picker.dispatchEvent(new Event('change'));",
        name,
    )


def answered(browser: Session) -> str:
    browser.wait(
        lambda: browser.script(f"return document.querySelector('{TURN}')?.dataset.answerId"),
        what="the answer",
    )
    return str(browser.find(f"{TURN} .answered-from").text)


def test_a_server_of_several_repositories_offers_a_picker_kept_in_the_browser(
    browser: Session, several: str, server: str
) -> None:
    browser.open(f"{server}/")  # one repository: no picker, answers name none
    browser.wait(lambda: browser.find("#model-state").text, what="the header")
    assert picked(browser)[0] is True

    browser.open(f"{several}/")
    browser.script("localStorage.removeItem('szrag.repository')")
    browser.open(f"{several}/")
    browser.wait(lambda: not picked(browser)[0], what="the picker")
    _, options, value = picked(browser)
    assert options == ["=All repositories", "mailer=mailer", "web=web"] and value == ""
    assert "all repositories" in browser.find("#repository").text

    choose(browser, "web")
    screenshot(browser, "page-repositories-picker.png")
    browser.find("#question").send_keys(QUESTION)
    browser.find("#ask").click()
    assert answered(browser) == "from web"
    assert browser.script(f"return document.querySelector('{TURN}').dataset.repository") == "web"
    # the image is web's (the first repository has none): its link names the repository
    image = browser.wait(
        lambda: browser.script(
            f"const img = document.querySelector('{TURN} .images img');"
            " return img && img.complete && img.naturalWidth > 0 && img.src"
        ),
        what="web's image",
    )
    assert str(image).endswith("architecture-diagram.png?repository=web")
    browser.script("window.scrollTo(0, 0)")
    screenshot(browser, "page-repositories.png")  # the picker and "from web" in view
    # a source opens highlighted from web's index, not the first repository's
    browser.find(f"{TURN} .sources li summary").click()
    browser.wait(
        lambda: browser.script(
            f"return document.querySelector('{TURN} .source-body').dataset.highlighted === 'done'"
        ),
        what="web's source highlighted",
    )

    set_width(browser, 390)  # the picker and the answer's repository fit a phone
    try:
        overflow = browser.script(OVERFLOWING)
        assert overflow["scrollWidth"] <= overflow["width"] and overflow["wide"] == [], overflow
    finally:
        set_width(browser, 1200)

    browser.open(f"{several}/")  # the choice is remembered by this browser
    browser.wait(lambda: not picked(browser)[0], what="the picker again")
    assert picked(browser)[2] == "web" and "web" in browser.find("#repository").text

    choose(browser, "")  # all repositories: the server routes the question
    browser.find("#question").send_keys("which service sends the welcome e-mail?")
    browser.find("#ask").click()
    assert answered(browser) == "from mailer"
    assert browser.script("return localStorage.getItem('szrag.repository')") == ""
    # a follow-up stays in the repository its conversation is in, whatever its words
    browser.find("#question").send_keys("and the gateway's token bucket?")
    browser.find("#ask").click()
    browser.wait(lambda: len(browser.find_all("#thread .turn")) == 2, what="the follow-up")
    assert answered(browser) == "from mailer"
    browser.script("localStorage.clear()")


def test_sources_and_images_name_their_repository_or_are_refused(several: str, server: str) -> None:
    with httpx.Client(base_url=several, timeout=30) as client:
        source: dict[str, str | int] = {"path": "src/gateway.js", "start": 1, "end": 3}
        assert client.get("/_szrag/source", params=source).status_code == 404  # not mailer's
        lines = client.get("/_szrag/source", params={**source, "repository": "web"})
        assert lines.status_code == 200 and lines.json()["data"]["path"] == "src/gateway.js"
        refused = client.get("/_szrag/source", params={**source, "repository": "mobile"})
        assert refused.status_code == 404 and refused.json()["code"] == "unknown_repository"
        assert "mailer, web" in refused.json()["error"]

        image = "/docs/diagrams/architecture-diagram.png"
        assert client.get(image).status_code == 404
        assert client.get(image, params={"repository": "web"}).content.startswith(b"\x89PNG")
        refused = client.get(image, params={"repository": "mobile"})
        assert refused.status_code == 404 and refused.json()["code"] == "unknown_repository"

        info = client.get("/_szrag/info").json()["data"]
        assert info["repositories"] == ["mailer", "web"]
    with httpx.Client(base_url=server, timeout=30) as client:
        refused = client.get("/_szrag/source", params={**source, "repository": "web"})
        assert refused.status_code == 404 and refused.json()["code"] == "unknown_repository"
        assert client.get(image, params={"repository": "nope"}).status_code == 404
        info = client.get("/_szrag/info").json()["data"]
        assert info["repositories"] == [info["repository"]]


BESIDE_FILES = {
    "billing": {
        f"src/{name}.py": f"def {name}(order):\n"
        f"    '''The {name} of an order's invoice with its tax lines.'''\n"
        f"    return total(order.lines, tax=vat_rate(order.country))\n"
        for name in ("render", "tax", "refund", "discount", "currency", "ledger", "export")
    },
    "mailer": {
        f"src/mail_{name}.py": f"def {name}_email(user):\n"
        f"    '''Send the {name} email to the user.'''\n"
        f"    return deliver_email(user.email, template='{name}')\n"
        for name in ("welcome", "reset", "digest", "receipt", "reminder", "farewell")
    },
}


@pytest.fixture
def beside(tmp_path: Path) -> Iterator[str]:
    """A server over ``billing`` and ``mailer``, whose files a question may mix."""
    for name, files in BESIDE_FILES.items():
        for relative, text in files.items():
            (tmp_path / name / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name / relative).write_text(text, encoding="utf-8")
    yield from serve_repositories([f"{name}={tmp_path / name}" for name in BESIDE_FILES])


def test_a_routed_answer_shows_the_other_repository_s_files_from_their_own_index(
    browser: Session, beside: str
) -> None:
    browser.open(f"{beside}/")
    browser.wait(lambda: not picked(browser)[0], what="the picker")
    choose(browser, "")  # all repositories: the server routes the question
    browser.find("#question").send_keys("refund invoice reminder email")
    browser.find("#ask").click()
    chosen = answered(browser).removeprefix("from ")
    other = {"mailer": "billing", "billing": "mailer"}[chosen]
    section = f"{TURN} .elsewhere-section"
    assert browser.script(f"return document.querySelector('{section}').hidden") is False
    assert "In other repositories" in browser.find(section).text
    first = f"{TURN} .elsewhere li"
    assert browser.find(f"{first} .location").text.startswith(f"{other}:")
    assert browser.script(f"return document.querySelector('{first}').dataset.repository") == other
    browser.find(f"{first} summary").click()
    browser.wait(
        lambda: browser.script(
            f"return document.querySelector('{first} .source-body').dataset.highlighted === 'done'"
        ),
        what="the other repository's source highlighted from its own index",
    )
    browser.script("localStorage.clear()")
