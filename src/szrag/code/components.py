"""Single-file components (Vue ``.vue``, Svelte ``.svelte``): their ``<script>`` blocks are
JavaScript or TypeScript (``lang="ts"``) and are parsed as such.

Everything outside the blocks is blanked, newlines kept, so the parse sees the script at the
lines and byte offsets it has in the file: definitions, calls and routes keep their real line
numbers without any mapping back.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

COMPONENT_EXTENSIONS = frozenset({".vue", ".svelte"})
_SCRIPT = re.compile(r"<script\b(?P<attributes>[^>]*)>(?P<body>.*?)</script\s*>", re.S | re.I)
_TYPESCRIPT = re.compile(r"""\blang\s*=\s*["']?(ts|typescript)\b""", re.I)
_NOT_NEWLINE = re.compile(r"[^\n]")


def component_script(path: str, text: str) -> tuple[str, str] | None:
    """``(language, text)`` to parse for a component: its script blocks in place, the rest
    blanked; None when ``path`` is no component or has no script."""
    if PurePosixPath(path).suffix.lower() not in COMPONENT_EXTENSIONS:
        return None
    blocks = list(_SCRIPT.finditer(text))
    if not blocks:
        return None
    language = (
        "typescript"
        if any(_TYPESCRIPT.search(block.group("attributes")) for block in blocks)
        else "javascript"
    )
    parts: list[str] = []
    position = 0
    for block in blocks:
        start, end = block.span("body")
        parts.append(_NOT_NEWLINE.sub(" ", text[position:start]))
        parts.append(text[start:end])
        position = end
    parts.append(_NOT_NEWLINE.sub(" ", text[position:]))
    return language, "".join(parts)
