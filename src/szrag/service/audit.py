"""The audit log: one JSON line per command execution (and per question, for faces that
record them), with who asked, what ran, the sanitised arguments, the outcome and the time.

Location: ``<root>/.rag/audit.log`` by default; ``SZRAG_AUDIT_LOG`` names another file, or
turns the log off with ``off``. The file is created readable by its owner only. Lines are
written with one append each, so concurrent writers do not interleave. A failure to write
is logged and never stops the command being audited.

A service of several repositories keeps one log (``service_audit_path``: ``audit.log`` in its
data folder, or ``SZRAG_AUDIT_LOG``), each repository's host writing through a view of it
(``for_repository``) so that every line names its ``repository``. Beside a store that keeps
the audit log itself (PostgreSQL: the ``szrag_audit`` table, one log for every replica), the
lines go there instead of a file (``AuditLog.beside``).
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

from szrag.base.errors import SzragError
from szrag.base.public import public, public_dict, rounded, utc_timestamp
from szrag.commands.inference import redact_password_phrases
from szrag.commands.model import CommandOutcome, Identity
from szrag.conversations import AuditLine, AuditSink, ConversationMemory
from szrag.tools.sanitise import REDACTED, sanitise, sanitise_text

log = logging.getLogger("szrag.service.audit")

ENV_VARIABLE = "SZRAG_AUDIT_LOG"
DEFAULT_RELATIVE_PATH = Path(".rag") / "audit.log"
SERVICE_FILENAME = "audit.log"  # in a service's data folder
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


def service_audit_path(home: Path | str, environ: Mapping[str, str]) -> Path | None:
    """Where the one audit log of a service whose data folder is ``home`` is written, as
    ``SZRAG_AUDIT_LOG`` in ``environ`` says (None: no log)."""
    configured = environ.get(ENV_VARIABLE, "").strip()
    if configured.lower() in DISABLED_VALUES:
        return None
    return Path(configured) if configured else Path(home) / SERVICE_FILENAME


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
    # the repository of a service it concerns (left out for a server of one repository)
    repository: str = field(default="", metadata=public(omit_empty=True))


class AuditFile:
    """Audit lines appended to a file, one write each (an :class:`AuditSink`)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(self, line: AuditLine) -> None:
        """Append ``line``'s text and a newline (OSError when the file cannot be written)."""
        data = (line.text + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(descriptor, data)
            finally:
                os.close(descriptor)

    def lines(self, limit: int | None = None) -> list[str]:
        """The file's lines, oldest first (the last ``limit`` when given); none for no file."""
        if not self.path.is_file():
            return []
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            found = [line for line in handle if line.strip()]
        return found[-limit:] if limit else found


class AuditLog:
    """Append-only JSON lines at ``path`` (or in ``sink``); neither records nothing. Each line
    names ``repository`` when one is given (a service's repository)."""

    def __init__(
        self, path: Path | str | None = None, *, sink: AuditSink | None = None, repository: str = ""
    ) -> None:
        self._sink = sink if sink is not None else AuditFile(path) if path is not None else None
        self.repository = repository

    @classmethod
    def for_root(cls, root: Path | str, environ: Mapping[str, str]) -> AuditLog:
        """The audit log of the repository at ``root``, honouring SZRAG_AUDIT_LOG."""
        return cls(audit_path(root, environ))

    @classmethod
    def disabled(cls) -> AuditLog:
        """An audit log that records nothing."""
        return cls(None)

    @classmethod
    def beside(cls, store: ConversationMemory, path: Path | None) -> AuditLog:
        """The audit log kept with ``store`` when it keeps one (PostgreSQL), else the file at
        ``path``; nothing when ``path`` is None (auditing turned off)."""
        if path is None:
            return cls.disabled()
        sink = store.audit_sink()
        return cls(path) if sink is None else cls(sink=sink)

    def for_repository(self, repository: str) -> AuditLog:
        """This log (the same file or table) with each line naming ``repository``."""
        return AuditLog(sink=self._sink, repository=repository)

    @property
    def path(self) -> Path | None:
        """The file written (None: no log, or one kept in a database)."""
        return self._sink.path if isinstance(self._sink, AuditFile) else None

    @property
    def enabled(self) -> bool:
        """True when records are written."""
        return self._sink is not None

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
        if self._sink is None:
            return None
        entry = public_dict(
            AuditEntry(
                _now(),
                event,
                source,
                identity,
                sanitise(fields),
                outcome,
                duration_ms,
                self.repository,
            )
        )
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        try:
            self._sink.append(AuditLine(self.repository, event, line))
        except OSError as error:
            log.warning("cannot write the audit log %s: %s", self.path, error.strerror or error)
            return None
        except SzragError as error:
            log.warning("cannot write the audit log: %s", error.message)
            return None
        return entry

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
        if self._sink is None:
            return []
        # a file's unreadable lines are skipped before the last ``limit`` are taken
        lines = self._sink.lines(None if isinstance(self._sink, AuditFile) else limit)
        records: list[dict[str, Any]] = []
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                records.append(value)
        return records[-limit:] if limit else records
