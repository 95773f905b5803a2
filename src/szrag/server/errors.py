"""The one error type of the HTTP faces: a status, a stable code and a message to show."""

from __future__ import annotations

from szrag.base.errors import SzragError


class ApiError(SzragError):
    """An HTTP failure answered as ``{ok: false, code, error}`` with ``status``."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = headers or {}
