"""Authentication: user passwords and API keys."""
