"""Runtime settings, read from the environment once per process.

Every variable is prefixed with ``STOCKROOM_``. Invalid values raise ``SettingsError`` at
start-up rather than surfacing later as odd behaviour.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PREFIX = "STOCKROOM_"
DEV_PEPPER = "dev-only-pepper"


class SettingsError(ValueError):
    """A configuration variable is missing or malformed."""


def _get(name: str, default: str | None = None) -> str | None:
    return os.environ.get(PREFIX + name, default)


def _int(name: str, default: int, minimum: int = 0) -> int:
    raw = _get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise SettingsError(f"{PREFIX}{name} must be an integer, got {raw!r}") from exc
    if value < minimum:
        raise SettingsError(f"{PREFIX}{name} must be at least {minimum}")
    return value


def _bool(name: str, default: bool) -> bool:
    raw = _get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    env: str
    db_path: Path
    api_key_pepper: str
    pbkdf2_iterations: int
    reservation_ttl_minutes: int
    low_stock_threshold: int
    jobs_enabled: bool
    smtp_host: str | None
    smtp_port: int
    alert_email: str | None
    log_level: str

    @property
    def is_production(self) -> bool:
        return self.env == "production"


def load_settings() -> Settings:
    env = _get("ENV", "development") or "development"
    pepper = _get("API_KEY_PEPPER")
    if not pepper:
        if env == "production":
            raise SettingsError(f"{PREFIX}API_KEY_PEPPER must be set in production")
        pepper = DEV_PEPPER
    return Settings(
        env=env,
        db_path=Path(_get("DB_PATH", "stockroom.db") or "stockroom.db"),
        api_key_pepper=pepper,
        # OWASP 2023 guidance for PBKDF2-HMAC-SHA256.
        pbkdf2_iterations=_int("PBKDF2_ITERATIONS", 600_000, minimum=10_000),
        reservation_ttl_minutes=_int("RESERVATION_TTL_MINUTES", 15, minimum=1),
        low_stock_threshold=_int("LOW_STOCK_THRESHOLD", 5),
        jobs_enabled=_bool("JOBS_ENABLED", True),
        smtp_host=_get("SMTP_HOST"),
        smtp_port=_int("SMTP_PORT", 25, minimum=1),
        alert_email=_get("ALERT_EMAIL"),
        log_level=(_get("LOG_LEVEL", "INFO") or "INFO").upper(),
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests call ``get_settings.cache_clear()``)."""
    return load_settings()
