"""Background jobs and the scheduler that runs them."""

from __future__ import annotations

from stockroom.jobs.expire_reservations import expire_reservations
from stockroom.jobs.low_stock import send_low_stock_alerts
from stockroom.jobs.scheduler import Job, Scheduler
from stockroom.settings import Settings


def default_jobs(settings: Settings) -> list[Job]:
    """Every periodic job the service runs, with its interval."""
    return [
        Job("expire-reservations", 60.0, lambda: expire_reservations(settings)),
        Job("low-stock-alerts", 15 * 60.0, lambda: send_low_stock_alerts(settings)),
    ]


__all__ = ["Job", "Scheduler", "default_jobs"]
