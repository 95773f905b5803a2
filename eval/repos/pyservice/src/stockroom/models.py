"""Request and response bodies of the HTTP API (pydantic models)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ItemIn(BaseModel):
    sku: str = Field(min_length=1, max_length=64, pattern=r"^[A-Z0-9][A-Z0-9-]*$")
    name: str = Field(min_length=1, max_length=200)
    quantity: int = Field(ge=0, default=0)
    location: str | None = Field(default=None, max_length=64)


class ItemUpdate(BaseModel):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    location: str | None = Field(default=None, max_length=64)


class StockAdjustment(BaseModel):
    delta: int = Field(description="Positive to receive stock, negative to write it off")
    reason: str = Field(min_length=1, max_length=200)


class ItemOut(BaseModel):
    id: int
    sku: str
    name: str
    quantity: int
    reserved: int
    available: int
    location: str | None
    updated_at: str


class ReservationIn(BaseModel):
    sku: str
    quantity: int = Field(gt=0, le=10_000)
    holder: str = Field(min_length=1, max_length=100, description="Order or cart reference")
    ttl_minutes: int | None = Field(default=None, gt=0, le=24 * 60)


class ReservationOut(BaseModel):
    id: int
    sku: str
    quantity: int
    holder: str
    status: str
    expires_at: str


class Credentials(BaseModel):
    username: str
    password: str


class NewKeyRequest(Credentials):
    scopes: list[str] = Field(default_factory=lambda: ["read"])


class NewKeyResponse(BaseModel):
    key: str = Field(description="Shown once; store it now")
    prefix: str
    scopes: list[str]
