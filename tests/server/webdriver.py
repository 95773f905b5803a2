"""A minimal W3C WebDriver client over httpx, driving Debian's chromium through chromedriver.

Only what the page test needs: start a headless session, open a URL, find elements, type,
click, read text and attributes, run a script and wait for a condition. No browser is ever
downloaded: the binaries are the system's ``/usr/bin/chromium`` and ``/usr/bin/chromedriver``.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx

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
