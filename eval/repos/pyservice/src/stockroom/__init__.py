"""Stockroom: inventory and reservation service."""

__version__ = "1.3.0"
