"""The web page in a real headless Chromium: ask a question against the fixture repository and
the scripted provider, and see the streamed answer, sources, images, activities and usage."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator

import pytest
from conftest import StartServer
from webdriver import Session, chromium_binaries, chromium_session

from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.server import RateLimit
from szrag.settings import Settings

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
const answer = document.getElementById('answer');
new MutationObserver(() => {
  const text = answer.textContent;
  if (text && window.answerStates[window.answerStates.length - 1] !== text) {
    window.answerStates.push(text);
  }
}).observe(answer, {childList: true, subtree: true, characterData: true});
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

    browser.wait(lambda: "Tokens:" in browser.find("#usage").text, what="the usage line")
    html = browser.script("return document.getElementById('answer').innerHTML")
    assert "<h2>Token bucket</h2>" in html and "<strong>ten</strong>" in html
    assert "<code>takeToken()</code>" in html
    assert "&lt;script&gt;" in html and browser.script("return window.injected === undefined")
    states = browser.script("return window.answerStates")
    assert len(states) >= 3, f"the answer did not stream: {states}"
    assert browser.find("#usage").text.startswith("Tokens: 321 in · 45 out · 366 total")

    sources = browser.find_all("#sources li")
    labels = [item.text for item in sources]
    assert labels and labels[0].startswith("docs/architecture.md:1-5")
    snippet = browser.find("#sources li pre")
    assert not snippet.text  # collapsed until opened
    browser.find("#sources li summary").click()
    assert "pass the rate limiter" in browser.find("#sources li pre").text

    rows = browser.find_all("#activities li")
    stages = [row.attribute("data-stage") for row in rows]
    assert stages[0] == "retrieval" and "context" in stages
    assert rows[0].text.startswith("+0 ms")
    assert all(row.text.startswith("+") for row in rows)
    durations = browser.script(
        "return [...document.querySelectorAll('#activities .duration')].map(e => e.textContent)"
    )
    assert any(duration.endswith("ms") or duration.endswith(" s") for duration in durations)

    image_ok = browser.wait(
        lambda: browser.script(
            "const img = document.querySelector('#images img'); return img && img.complete && img.naturalWidth > 0"
        ),
        what="the image thumbnail",
    )
    assert image_ok
    assert "docs/diagrams/architecture-diagram.png" in browser.find("#images figcaption").text
    assert notice(browser) == ("", "")


def test_no_key_and_rate_limit_states_are_shown(
    browser: Session, start_server: StartServer
) -> None:
    base = start_server(
        answer_settings=Settings(ai_api_key=None), ask_rate=RateLimit(per_minute=1, burst=1)
    )

    ask(browser, base)
    browser.wait(lambda: notice(browser)[0] == "warn", what="the no-key notice")
    assert "No model key is configured" in notice(browser)[1]
    assert "No model is configured" in browser.find("#answer").text
    assert browser.find_all("#sources li")

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
    browser.wait(lambda: browser.find_all("#sources li"), what="sources after the token")
    image = browser.wait(
        lambda: browser.script(
            "const img = document.querySelector('#images img'); "
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


def test_the_page_logs_no_script_errors(browser: Session, server: str) -> None:
    browser.logs()  # drop what earlier tests left (their 401 and 429 answers)
    browser.open(f"{server}/")
    browser.find("#question")

    severe = [entry for entry in browser.logs() if entry.get("level") == "SEVERE"]
    assert severe == []
