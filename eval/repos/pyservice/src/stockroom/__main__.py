"""Allow ``python -m stockroom``."""

from stockroom.cli import main

raise SystemExit(main())
