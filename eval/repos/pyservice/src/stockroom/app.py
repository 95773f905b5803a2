"""The FastAPI application factory."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from stockroom import __version__
from stockroom.db import init_db
from stockroom.errors import install_handlers
from stockroom.jobs import Scheduler, default_jobs
from stockroom.logging_setup import configure_logging
from stockroom.routers import health, items, reservations, users
from stockroom.settings import Settings, get_settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level)
        version = init_db(settings.db_path)
        log.info("database %s at schema version %d", settings.db_path, version)
        scheduler = Scheduler(default_jobs(settings)) if settings.jobs_enabled else None
        if scheduler:
            scheduler.start()
        app.state.scheduler = scheduler
        try:
            yield
        finally:
            if scheduler:
                scheduler.stop()

    app = FastAPI(title="Stockroom", version=__version__, lifespan=lifespan)
    app.dependency_overrides[get_settings] = lambda: settings
    install_handlers(app)
    app.include_router(health.router)
    app.include_router(items.router)
    app.include_router(reservations.router)
    app.include_router(users.router)
    return app
