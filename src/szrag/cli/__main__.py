"""``python -m szrag.cli``."""

from szrag.cli import main

main()
