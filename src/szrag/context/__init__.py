"""The repository knowledge a model receives: codebase context and the token-budgeted packer."""

from szrag.context.build import MAX_CODE_CONTEXTS, MAX_RELATIONSHIP_ROOTS, build_codebase_context
from szrag.context.model import CodebaseContext, CodeEntry
from szrag.context.pack import (
    MAX_CONTEXT_TOKENS,
    ContextChunk,
    PackedChunk,
    PackedContext,
    chunk_priority,
    pack_chunks,
    pack_repository_context,
)
from szrag.context.tokens import TokenCounter, estimate_token_count, load_counter

__all__ = [
    "MAX_CODE_CONTEXTS",
    "MAX_CONTEXT_TOKENS",
    "MAX_RELATIONSHIP_ROOTS",
    "CodeEntry",
    "CodebaseContext",
    "ContextChunk",
    "PackedChunk",
    "PackedContext",
    "TokenCounter",
    "build_codebase_context",
    "chunk_priority",
    "estimate_token_count",
    "load_counter",
    "pack_chunks",
    "pack_repository_context",
]
