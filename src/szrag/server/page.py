"""The web page at ``/`` (static files shipped in the package, no build step) and the
repository's images at their ``/<relative path>`` URLs."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import anyio
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.convertors import Convertor, register_url_convertor

from szrag.base.public import to_public
from szrag.base.redact import redact
from szrag.server.api import reader
from szrag.server.errors import ApiError
from szrag.server.highlight import highlight_lines, language, style_sheet
from szrag.server.images import CONTENT_TYPES, ImageCatalogue, content_type
from szrag.server.repositories import only_repository
from szrag.server.service import AskService
from szrag.server.state import ServerState, server_state

# The page runs only its own scripts and styles and talks only to this server.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
ASSET_PREFIX = "/_szrag/"
# the repository a source or an image link names (``?repository=NAME``): the first if none
REPOSITORY_QUERY = Query(None, max_length=64)


@dataclass(frozen=True, slots=True)
class Asset:
    """One static file held in memory."""

    body: bytes
    media_type: str


_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def load_assets() -> dict[str, Asset]:
    """The files of ``szrag/server/static`` by name."""
    folder = resources.files("szrag.server").joinpath("static")
    assets: dict[str, Asset] = {}
    for item in folder.iterdir():
        suffix = "." + item.name.rsplit(".", 1)[-1]
        if item.is_file() and suffix in _MEDIA_TYPES:
            assets[item.name] = Asset(item.read_bytes(), _MEDIA_TYPES[suffix])
    return assets


ASSETS = load_assets()
ASSETS["highlight.css"] = Asset(style_sheet().encode(), _MEDIA_TYPES[".css"])
MAX_SOURCE_LINES = 2000


class ImagePathConvertor(Convertor[str]):
    """A URL path ending in an image extension, so other paths keep their 404 and 405 answers."""

    regex = r".+\.(?i:" + "|".join(suffix.lstrip(".") for suffix in sorted(CONTENT_TYPES)) + ")"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("szrag_image", ImagePathConvertor())

router = APIRouter()


def _asset_response(name: str) -> Response:
    asset = ASSETS.get(name)
    if asset is None:
        raise ApiError(404, "not_found", "no such file")
    headers = {"Cache-Control": "no-cache"}
    if name.endswith(".html"):
        headers["Content-Security-Policy"] = PAGE_POLICY
    return Response(asset.body, media_type=asset.media_type, headers=headers)


@router.get("/", include_in_schema=False)
async def index_page() -> Response:
    """The question page."""
    return _asset_response("index.html")


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Whether a model is configured, and which."""

    configured: bool
    name: str


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What the page shows before the first question."""

    repository: str
    model: ModelInfo
    repo_url: str | None  # the repository browser's address
    live_tools: bool
    repositories: tuple[str, ...]  # every repository served, in order (the picker's)


@router.get(ASSET_PREFIX + "info", include_in_schema=False)
async def page_info(request: Request) -> Response:
    """What the page says before the first question: the repository, whether a model is
    configured (and which), the repository browser's address and whether live tools are on."""
    reader(request)
    state = server_state(request)
    host = state.service.host
    settings = host.settings
    info = PageInfo(
        repository=host.root.name,
        model=ModelInfo(configured=settings.has_key, name=settings.ai_model),
        repo_url=state.settings.repo_url,
        live_tools=host.live_tools,
        repositories=tuple(state.repositories.names())
        if state.repositories is not None
        else (host.root.name,),
    )
    return JSONResponse(
        {"ok": True, "data": to_public(info)}, headers={"Cache-Control": "no-cache"}
    )


@router.get(ASSET_PREFIX + "source", include_in_schema=False)
async def source_lines(
    request: Request,
    path: str = Query(max_length=1000),
    start: int = Query(ge=1),
    end: int = Query(ge=1),
    repository: str | None = REPOSITORY_QUERY,
) -> Response:
    """The indexed lines ``start``-``end`` of ``path`` (a source an answer cited) in
    ``repository`` (default the first), redacted and highlighted line by line."""
    reader(request)
    index = (await _scope(server_state(request), repository))[0].index
    found = await anyio.to_thread.run_sync(index.lines, path, start, end) if end >= start else []
    if not found:
        raise ApiError(404, "not_found", f"no indexed source {path}:{start}-{end}")
    end = start + len(found) - 1  # a range past the file's end is cut at its last line
    lines = highlight_lines(redact("\n".join(found), path=path), path)[:MAX_SOURCE_LINES]
    data = {"path": path, "start": start, "end": end, "language": language(path), "lines": lines}
    return JSONResponse({"ok": True, "data": data}, headers={"Cache-Control": "no-cache"})


@router.get(ASSET_PREFIX + "{name}", include_in_schema=False)
async def asset(name: str) -> Response:
    """The page's scripts, style sheet and icon."""
    return _asset_response(name)


@router.get("/{path:szrag_image}", include_in_schema=False)
async def image(path: str, request: Request, repository: str | None = REPOSITORY_QUERY) -> Response:
    """A repository image found by retrieval (of ``repository``, default the first); any
    other image path is 404, an unknown repository 404 ``unknown_repository``.

    Like the API's reads it needs the token (when the API does) and spends from the caller's
    read budget; hosts and origins were checked by the application's guard.
    """
    reader(request)
    images = (await _scope(server_state(request), repository))[1]
    found = await anyio.to_thread.run_sync(images.read, path)
    if found is None:
        raise ApiError(404, "not_found", "no such file")
    media_type = content_type(path) or "application/octet-stream"
    return Response(found, media_type=media_type, headers={"Cache-Control": "no-cache"})


async def _scope(state: ServerState, repository: str | None) -> tuple[AskService, ImageCatalogue]:
    """The service and images of the repository named, else of the first."""
    faces = state.repositories
    if faces is None:
        only_repository(state.service.root.name, repository)
        return state.service, state.images
    face = await faces.named_or_default(repository)
    return face.service, face.images
