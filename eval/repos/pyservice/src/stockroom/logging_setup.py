"""Logging configuration: key=value lines on stderr, which journald stores."""

from __future__ import annotations

import logging
import sys

FORMAT = "%(asctime)s level=%(levelname)s logger=%(name)s msg=%(message)s"


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # uvicorn's access log duplicates what the load balancer records.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
