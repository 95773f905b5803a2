"""The Rich console every command prints through, made on first use by ``cli/common.py``."""

from __future__ import annotations

from typing import Any

from rich.align import AlignMethod
from rich.console import Console, ConsoleDimensions
from rich.rule import Rule
from rich.style import Style
from rich.text import Text

from szrag.cli.common import UNBOUNDED_WIDTH, terminal_safe, writes_to_terminal

RULE_WIDTH = 80  # of a separator line when no terminal says how wide to draw it


class SafeConsole(Console):
    """A Rich console that escapes control characters in every text it renders (tables and
    markup included); its own styling is added afterwards and stays intact.

    Writing to a pipe or a file it has no width limit, so no table cell is wrapped or cut
    (Rich would otherwise take 80 columns, or the width of whichever stream is a terminal);
    a rule, which fills whatever width there is, is then drawn :data:`RULE_WIDTH` wide."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # A width the caller sets is kept; one Rich reads from COLUMNS is a terminal's.
        self._width_given = kwargs.get("width") is not None
        super().__init__(*args, **kwargs)

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(terminal_safe(text), **options)

    def rule(
        self,
        title: str | Text = "",
        *,
        characters: str = "─",
        style: str | Style = "rule.line",
        align: AlignMethod = "center",
    ) -> None:
        line = Rule(title, characters=characters, style=style, align=align)
        self.print(line, width=None if self._bounded else RULE_WIDTH)

    @property
    def _bounded(self) -> bool:
        return self._width_given or self.writes_to_terminal

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        if not self._bounded:
            return ConsoleDimensions(UNBOUNDED_WIDTH, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size
        self._width_given = True

    @property
    def width(self) -> int:
        return self.size.width

    @width.setter
    def width(self, width: int) -> None:
        self._width = width
        self._width_given = True

    @property
    def writes_to_terminal(self) -> bool:
        """True when the output stream is a terminal (``is_terminal`` also answers True for a
        pipe when FORCE_COLOR asks for colours, and colours need no width)."""
        return writes_to_terminal(self.file)
