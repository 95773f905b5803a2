"""How many tokens a model request took: a record the answer carries whether or not a model
was asked, kept apart from the client so a keyless answer does not import it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from szrag.base.public import public, public_dict


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one or more requests; ``estimated`` when any count was guessed."""

    input_tokens: int = field(default=0, metadata=public(name="input"))
    output_tokens: int = field(default=0, metadata=public(name="output"))
    # input and output together
    total_tokens: int = field(init=False, metadata=public(name="total"))
    estimated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.estimated or other.estimated,
        )

    def to_dict(self) -> dict[str, Any]:
        """``{input, output, total, estimated}``."""
        return public_dict(self)
