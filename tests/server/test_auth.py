"""Bearer tokens, the admin token, the exposure rule and per-identity rate limits."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from szrag.base.errors import ConfigError
from szrag.server import RateLimit, ServerSettings
from szrag.server.auth import (
    authenticate,
    bearer_token,
    check_exposure,
    fingerprint,
    is_loopback,
    token_in,
)
from szrag.server.errors import ApiError
from szrag.server.ratelimit import Decision, RateLimiter, refill, wait_for

StartServer = Callable[..., str]


ASK = {"question": "How does the gateway token bucket work?", "withAi": False}


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.org", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_an_open_api_may_not_listen_beyond_this_machine() -> None:
    with pytest.raises(ConfigError, match="SZRAG_API_TOKENS"):
        check_exposure("0.0.0.0", ServerSettings())
    check_exposure("0.0.0.0", ServerSettings(api_tokens=frozenset({"secret"})))
    check_exposure("127.0.0.1", ServerSettings())


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer   abc  ", "abc"),
        ("Basic abc", None),
        ("Bearer", None),
        ("", None),
        (None, None),
    ],
)
def test_bearer_token_parsing(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_token_comparison_and_fingerprints() -> None:
    assert token_in("beta", ["alpha", "beta"])
    assert not token_in("bet", ["alpha", "beta"])
    assert not token_in("x", [])
    assert fingerprint("alpha") != fingerprint("beta") and len(fingerprint("alpha")) == 12


def test_callers_are_keyed_by_token_digest_or_address() -> None:
    open_settings = ServerSettings()
    closed = ServerSettings(api_tokens=frozenset({"alpha"}), admin_token="root")

    assert authenticate(None, "127.0.0.1", open_settings).key == "ip:127.0.0.1"
    assert authenticate("Bearer alpha", "127.0.0.1", closed).key == f"token:{fingerprint('alpha')}"
    admin = authenticate("Bearer root", None, closed)
    assert admin.admin and admin.key == f"token:{fingerprint('root')}"
    with pytest.raises(ApiError) as missing:
        authenticate(None, "127.0.0.1", closed)
    with pytest.raises(ApiError) as wrong:
        authenticate("Bearer beta", "127.0.0.1", closed)
    assert missing.value.status == wrong.value.status == 401


def test_settings_from_the_environment() -> None:
    settings = ServerSettings.from_env(
        {
            "SZRAG_API_TOKENS": " a, b ,,",
            "SZRAG_ADMIN_TOKEN": "root",
            "SZRAG_CORS_ORIGINS": "http://x.example",
            "SZRAG_RATE_LIMIT": "12",
            "SZRAG_RATE_BURST": "3",
            "SZRAG_REPO_URL": "https://github.com/o/r/blob/main/",
            "SZRAG_WATCH": "0",
        }
    )
    assert settings.api_tokens == frozenset({"a", "b"})
    assert settings.admin_token == "root" and settings.cors_origins == ("http://x.example",)
    assert settings.ask_rate == RateLimit(12, 3)
    assert settings.repo_url == "https://github.com/o/r/blob/main"
    assert settings.watch is False
    with pytest.raises(ConfigError, match="SZRAG_RATE_LIMIT"):
        ServerSettings.from_env({"SZRAG_RATE_LIMIT": "fast"})
    with pytest.raises(ConfigError, match="SZRAG_WATCH"):
        ServerSettings.from_env({"SZRAG_WATCH": "maybe"})


# Rate limits -------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_refills_at_the_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(per_minute=60, burst=2), clock=clock)

    assert [limiter.take("a").allowed for _ in range(3)] == [True, True, False]
    refused = limiter.take("a")
    assert not refused.allowed and refused.retry_after == pytest.approx(1.0)
    assert refused.retry_after_header == "1"
    assert limiter.take("b").allowed  # another identity has its own bucket
    clock.now += 1.0
    assert limiter.take("a").allowed
    assert not limiter.take("a").allowed


def test_buckets_are_bounded_and_an_off_limit_allows_everything() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(60, 1), clock=clock, max_keys=3)
    for key in "abcde":
        limiter.take(key)
    assert len(limiter) == 3
    unlimited = RateLimiter(RateLimit(0, 0))
    assert all(unlimited.take("x").allowed for _ in range(100))


def test_refill_and_wait_arithmetic() -> None:
    assert refill(0.0, 2.0, 0.5, 10.0) == 1.0
    assert refill(9.5, 10.0, 1.0, 10.0) == 10.0
    assert refill(3.0, -5.0, 1.0, 10.0) == 3.0  # a clock going back never drains a bucket
    assert wait_for(0.5, 0.25) == 2.0
    assert Decision(False, 0.2).retry_after_header == "1"
    assert Decision(False, 2.1).retry_after_header == "3"


# Over HTTP ------------------------------------------------------------------------------


def test_the_api_needs_a_configured_bearer_token(start_server: StartServer) -> None:
    base = start_server(api_tokens=frozenset({"alpha", "beta"}))
    with httpx.Client(base_url=base) as client:
        missing = client.post("/api/ask", json=ASK)
        wrong = client.post("/api/ask", json=ASK, headers={"Authorization": "Bearer gamma"})
        right = client.post("/api/ask", json=ASK, headers={"Authorization": "Bearer beta"})
        reads = client.get("/api/status")

    assert missing.status_code == 401 and missing.json()["code"] == "unauthorized"
    assert wrong.status_code == 401
    assert right.status_code == 200 and right.json()["ok"] is True
    assert reads.status_code == 401


def test_asks_are_rate_limited_per_identity_with_retry_after(start_server: StartServer) -> None:
    base = start_server(
        api_tokens=frozenset({"alpha", "beta"}), ask_rate=RateLimit(per_minute=6, burst=2)
    )
    alpha = {"Authorization": "Bearer alpha"}
    beta = {"Authorization": "Bearer beta"}
    with httpx.Client(base_url=base) as client:
        statuses = [client.post("/api/ask", json=ASK, headers=alpha).status_code for _ in range(3)]
        limited = client.post("/api/ask", json=ASK, headers=alpha)
        other = client.post("/api/ask", json=ASK, headers=beta)
        reads = client.get("/api/status", headers=alpha)

    assert statuses == [200, 200, 429]
    assert limited.status_code == 429 and limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 10
    assert other.status_code == 200
    assert reads.status_code == 200  # reads have their own budget


def test_reads_are_rate_limited_too(start_server: StartServer) -> None:
    base = start_server(read_rate=RateLimit(per_minute=60, burst=2))
    with httpx.Client(base_url=base) as client:
        statuses = [client.get("/api/metrics").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
