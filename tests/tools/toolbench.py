"""The tool bench: an adapter over a temporary repository with its reporters at hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from szrag.audit import AuditLog
from szrag.commands import Allowlist, CommandRegistry
from szrag.runtime import ProcessRuntime
from szrag.tools import ToolAdapter


@dataclass
class ToolBench:
    """An adapter and everything it reports to."""

    root: Path
    registry: CommandRegistry
    runtime: ProcessRuntime
    audit: AuditLog
    activities: list[dict[str, Any]] = field(default_factory=list)

    def adapter(self, **options: Any) -> ToolAdapter:
        """An adapter over this bench; options override the defaults."""
        settings: dict[str, Any] = {
            "registry": self.registry,
            "runtime": self.runtime,
            "index_root": self.root,
            "allowlist": Allowlist(),
            "audit": self.audit,
            "on_activity": self.activities.append,
        }
        settings.update(options)
        return ToolAdapter(**settings)
