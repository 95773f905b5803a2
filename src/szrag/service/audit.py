"""The audit log: one JSON line per command execution (and per question, for faces that
record them), with who asked, what ran, the sanitised arguments, the outcome and the time.

Location: ``<root>/.rag/audit.log`` by default; ``SZRAG_AUDIT_LOG`` names another file, or
turns the log off with ``off``. The file is created readable by its owner only. Lines are
written with one append each, so concurrent writers do not interleave. A failure to write
is logged and never stops the command being audited.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from szrag.base.public import public, public_dict, rounded, utc_timestamp
from szrag.commands.inference import redact_password_phrases
from szrag.commands.model import CommandOutcome, Identity
from szrag.tools.sanitise import REDACTED, sanitise, sanitise_text

log = logging.getLogger("szrag.service.audit")

ENV_VARIABLE = "SZRAG_AUDIT_LOG"
DEFAULT_RELATIVE_PATH = Path(".rag") / "audit.log"
DISABLED_VALUES = frozenset({"off", "none", "false", "0", "-"})
MAX_TEXT_CHARS = 2000


def _now() -> str:
    return utc_timestamp()


def audit_path(root: Path | str, environ: Mapping[str, str]) -> Path | None:
    """Where the audit log of the repository at ``root`` is written, as ``SZRAG_AUDIT_LOG``
    in ``environ`` says (None: no log)."""
    configured = environ.get(ENV_VARIABLE, "").strip()
    if configured.lower() in DISABLED_VALUES:
        return None
    return Path(configured) if configured else Path(root) / DEFAULT_RELATIVE_PATH


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit log: when, what, from where, who, the event's own sanitised
    fields (``command``, ``arguments``, ``question``...), the outcome and the time taken."""

    time: str
    event: str
    source: str
    identity: Identity
    fields: Mapping[str, Any] = field(metadata=public(spread=True))
    outcome: str
    duration_ms: float = field(metadata=public(convert=rounded(3)))


class AuditLog:
    """Append-only JSON lines at ``path``; ``path=None`` records nothing."""

    def __init__(self, path: Path | str | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()

    @classmethod
    def for_root(cls, root: Path | str, environ: Mapping[str, str]) -> AuditLog:
        """The audit log of the repository at ``root``, honouring SZRAG_AUDIT_LOG."""
        return cls(audit_path(root, environ))

    @classmethod
    def disabled(cls) -> AuditLog:
        """An audit log that records nothing."""
        return cls(None)

    @property
    def enabled(self) -> bool:
        """True when records are written."""
        return self.path is not None

    def record(
        self,
        event: str,
        *,
        identity: Identity,
        outcome: str,
        duration_ms: float,
        source: str,
        **fields: Any,
    ) -> dict[str, Any] | None:
        """Append one record; returns it (None when disabled or the write failed)."""
        if self.path is None:
            return None
        entry = public_dict(
            AuditEntry(_now(), event, source, identity, sanitise(fields), outcome, duration_ms)
        )
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            self._append(line.encode("utf-8"))
        except OSError as error:
            log.warning("cannot write the audit log %s: %s", self.path, error.strerror or error)
            return None
        return entry

    def _append(self, data: bytes) -> None:
        assert self.path is not None
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(descriptor, data)
            finally:
                os.close(descriptor)

    def record_command(self, outcome: CommandOutcome) -> None:
        """Record a command execution (pass as an observer of the command runner)."""
        if outcome.sensitive and outcome.text:
            text = REDACTED
        else:
            text = redact_password_phrases(outcome.text[:MAX_TEXT_CHARS])
        self.record(
            "command",
            identity=outcome.identity,
            outcome=outcome.status,
            duration_ms=outcome.duration_ms,
            source=outcome.source,
            command=outcome.command_id,
            arguments={"text": text},
            responses=outcome.responses,
            message=outcome.message,
        )

    def record_ask(
        self,
        identity: Identity,
        question: str,
        *,
        outcome: str,
        duration_ms: float,
        source: str = "ask",
        message: str = "",
    ) -> None:
        """Record a question put to the service (secrets in it redacted, passwords named in
        prose too)."""
        self.record(
            "ask",
            identity=identity,
            outcome=outcome,
            duration_ms=duration_ms,
            source=source,
            # "hash the password hunter2": prose a key=value rule does not see.
            question=sanitise_text(redact_password_phrases(question), MAX_TEXT_CHARS),
            message=message,
        )

    def read(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The records in order (the last ``limit`` when given); unreadable lines skipped."""
        if self.path is None or not self.path.is_file():
            return []
        records: list[dict[str, Any]] = []
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    records.append(value)
        return records[-limit:] if limit else records
