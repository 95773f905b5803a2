"""The version of szrag, in a module of its own so any part can read it without importing
the whole package."""

__version__ = "0.1.0"
