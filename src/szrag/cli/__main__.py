"""``python -m szrag.cli``."""

from szrag.cli import run

run()
