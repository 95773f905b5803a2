"""Domain errors and how the API turns them into HTTP responses."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


class StockroomError(Exception):
    """Base class; ``status`` is the HTTP status the API answers with."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(StockroomError):
    status = 404
    code = "not_found"


class Conflict(StockroomError):
    status = 409
    code = "conflict"


class InsufficientStock(Conflict):
    code = "insufficient_stock"

    def __init__(self, sku: str, requested: int, available: int) -> None:
        super().__init__(f"only {available} of {sku} available, {requested} requested")
        self.available = available


class InvalidTransition(Conflict):
    code = "invalid_transition"


class AuthError(StockroomError):
    status = 401
    code = "unauthorized"


class Forbidden(StockroomError):
    status = 403
    code = "forbidden"


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(StockroomError)
    async def _stockroom_error(_request: Request, exc: StockroomError) -> JSONResponse:
        headers = {"WWW-Authenticate": "ApiKey"} if isinstance(exc, AuthError) else None
        return JSONResponse(
            status_code=exc.status,
            content={"error": exc.code, "message": exc.message},
            headers=headers,
        )
