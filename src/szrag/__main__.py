"""``python -m szrag``: the same as the ``szrag`` command."""

from szrag.cli import run

run()
