"""The persistent repository index: collection, storage, build and refresh."""

from szrag.index.build import build_index, load_index, refresh_index
from szrag.index.collect import Collection, Skip, collect
from szrag.index.handle import FileEntry, Index, RefreshReport

__all__ = [
    "Collection",
    "FileEntry",
    "Index",
    "RefreshReport",
    "Skip",
    "build_index",
    "collect",
    "load_index",
    "refresh_index",
]
