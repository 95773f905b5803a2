"""Per-identity token buckets: a burst is allowed, then requests flow at a steady rate.

Each identity (a token digest, an address, a Slack user) owns a bucket of ``burst`` tokens that
refills at ``per_minute / 60`` tokens a second. A request takes one token; with none left it is
refused with the number of seconds until one is back, which becomes ``Retry-After``. Buckets
are kept in least-recently-used order and the oldest are dropped past ``max_keys`` so memory
stays bounded whoever calls.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from szrag.server.settings import RateLimit

DEFAULT_MAX_KEYS = 10_000


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to one request: allowed or not, and when to retry."""

    allowed: bool
    retry_after: float = 0.0

    @property
    def retry_after_header(self) -> str:
        """Whole seconds for the ``Retry-After`` header (at least 1 when refused)."""
        return str(max(1, math.ceil(self.retry_after)))


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


def refill(tokens: float, elapsed: float, rate_per_second: float, capacity: float) -> float:
    """Tokens in a bucket after ``elapsed`` seconds of refilling, never above ``capacity``."""
    return min(capacity, tokens + max(0.0, elapsed) * rate_per_second)


def wait_for(missing: float, rate_per_second: float) -> float:
    """Seconds until ``missing`` tokens have refilled."""
    return missing / rate_per_second if rate_per_second > 0 else math.inf


class RateLimiter:
    """Token buckets keyed by identity; safe to call from any thread."""

    def __init__(
        self,
        limit: RateLimit,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        self.limit = limit
        self._clock = clock
        self._max_keys = max_keys
        self._rate = limit.per_minute / 60.0
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str, cost: float = 1.0) -> Decision:
        """Spend ``cost`` tokens of ``key``'s bucket, or say how long until they are there."""
        if not self.limit.enabled:
            return Decision(True)
        capacity = float(self.limit.burst)
        with self._lock:
            now = self._clock()
            bucket = self._buckets.pop(key, None) or _Bucket(capacity, now)
            bucket.tokens = refill(bucket.tokens, now - bucket.updated, self._rate, capacity)
            bucket.updated = now
            self._buckets[key] = bucket
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
            if bucket.tokens >= cost:
                bucket.tokens -= cost
                return Decision(True)
            return Decision(False, wait_for(cost - bucket.tokens, self._rate))

    def __len__(self) -> int:
        return len(self._buckets)
