"""Live evidence from the application that is actually running, not from szrag's own process.

Configured per repository (``[runtime]``: ``url``, ``token_env``, ``log_files``,
``allow_public``) with environment overrides (``SZRAG_RUNTIME_URL``, ``SZRAG_RUNTIME_TOKEN``,
``SZRAG_LOG_FILES``: comma-separated globs); a token only ever comes from the environment.

* The **HTTP source** reads the application's own endpoints, the paths the original service's
  tools name: ``/api/status``, ``/api/release``, ``/api/logs``, ``/api/admin/errors``,
  ``/api/metrics`` (a ``{"ok", "data"}`` envelope is unwrapped). Loopback and private
  addresses only, unless ``allow_public``.
* **Log files** (globs, with their rotations ``app.log.1``, ``app.log.2.gz``) give ``getLogs``
  (JSON lines and plain lines, a level filter) and, without an HTTP source, ``getErrors``:
  ERROR records and Python tracebacks grouped by type and message, with their count, first and
  last time seen and the innermost frame inside the repository.
* Anything not configured is answered by szrag's own process, as before. Every answer says in
  ``source`` where it came from.
"""

from __future__ import annotations

import glob
import gzip
import ipaddress
import json
import re
import shutil
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from szrag.base.config import RuntimeConfig
from szrag.base.env import text as env_text
from szrag.base.env import text_list as env_list
from szrag.base.errors import ConfigError, ToolError
from szrag.base.public import public, public_dict, utc_timestamp
from szrag.runtime import MAX_READ, ProcessRuntime, Sourced, since_time

READ_TIMEOUT = 4.0  # seconds: inside the tool's own five
PROCESS = "szrag process"  # the source of a read szrag's own process answers
DEFAULT_PATHS = {
    "status": "/api/status",
    "logs": "/api/logs",
    "errors": "/api/admin/errors",
    "metrics": "/api/metrics",
    "release": "/api/release",
}
MAX_SAMPLES = 200
MAX_LOG_BYTES = 8 * 1024 * 1024  # of one (decompressed) log file read for its tail
LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40, "critical": 50}
_LEVEL = re.compile(r"\b(DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL)\b")
_TIME = re.compile(r"^\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_EXCEPTION = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)):\s*(?P<message>.*)$"
)


@dataclass(frozen=True, slots=True)
class RuntimeSources:
    """The configured sources, environment overrides applied."""

    url: str | None = None
    token: str | None = None
    log_files: tuple[str, ...] = ()
    allow_public: bool = False
    metrics_url: str | None = None
    journal_unit: str | None = None
    paths: tuple[tuple[str, str | None], ...] = ()
    commit_file: str | None = None

    def path(self, read: str) -> str | None:
        """The HTTP path of ``read`` (``status`` ...), None when it is turned off."""
        for key, value in self.paths:
            if key == read:
                return value
        return DEFAULT_PATHS[read]

    @classmethod
    def of(cls, config: RuntimeConfig, environ: Mapping[str, str]) -> RuntimeSources:
        """The sources of ``config`` with ``environ``'s overrides; a bad URL is a ConfigError."""
        url = env_text(environ, "SZRAG_RUNTIME_URL") or config.url
        token = env_text(environ, "SZRAG_RUNTIME_TOKEN")
        if not token and config.token_env:
            token = env_text(environ, config.token_env)
        files = tuple(env_list(environ, "SZRAG_LOG_FILES")) or config.log_files
        metrics = env_text(environ, "SZRAG_METRICS_URL") or config.metrics_url
        unit = env_text(environ, "SZRAG_JOURNAL_UNIT") or config.journal_unit
        if unit and not _UNIT.fullmatch(unit):
            raise ConfigError(f"the journal unit {unit!r} is not a systemd unit name")
        sources = cls(
            url.rstrip("/") if url else None,
            token or None,
            files,
            config.allow_public,
            metrics,
            unit or None,
            config.paths,
            config.commit_file,
        )
        for checked in (sources.url, sources.metrics_url):
            if checked is not None:
                check_url(checked, allow_public=sources.allow_public)
        return sources

    @property
    def configured(self) -> bool:
        """Whether anything but szrag's own process is a source."""
        return bool(
            self.url or self.log_files or self.metrics_url or self.journal_unit or self.commit_file
        )


def check_url(url: str, *, allow_public: bool) -> None:
    """ConfigError unless ``url`` is http(s) on a loopback or private address (or allowed)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the runtime URL must be http:// or https:// with a host, not {url!r}")
    if allow_public:
        return
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parts.hostname, None)}
    except OSError as error:
        message = f"the runtime URL's host {parts.hostname!r} does not resolve: {error}"
        raise ConfigError(message) from None
    for address in addresses:
        ip = ipaddress.ip_address(str(address).split("%", 1)[0])
        if not (ip.is_loopback or ip.is_private or ip.is_link_local):
            raise ConfigError(
                f"the runtime URL {url!r} is a public address ({ip}); set"
                " allow_public = true under [runtime] to read it"
            )


@dataclass(frozen=True, slots=True)
class LogLines:
    """Log records read from the log files or the journal, oldest first (each ``{time,
    level, message}``, a JSON line with its own fields too)."""

    entries: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ErrorGroups:
    """The errors of the log files or the journal, grouped, most recent group first."""

    errors: tuple[ErrorGroup, ...]


@dataclass(frozen=True, slots=True)
class Samples:
    """A Prometheus exposition's samples (``{name, labels, value}``), the first
    ``MAX_SAMPLES`` of ``count``."""

    samples: list[dict[str, Any]]
    count: int
    truncated: bool


class ApplicationRuntime:
    """The runtime the live tools read: the configured sources, else szrag's own process
    (which keeps counting commands and tools either way). A blocking runtime: each read a
    :class:`~szrag.runtime.Sourced` record."""

    def __init__(self, process: ProcessRuntime, sources: RuntimeSources, root: Path) -> None:
        self.process = process
        self.sources = sources
        self.root = root.resolve()

    # Reads ---------------------------------------------------------------------------

    def _serves(self, read: str) -> str | None:
        """The HTTP path that answers ``read``, when the HTTP source does."""
        return self.sources.path(read) if self.sources.url else None

    def status(self) -> Sourced:
        if path := self._serves("status"):
            return self._http(path)
        return Sourced(PROCESS, self.process.status())

    def metrics(self, name: str | None = None, label: str | None = None) -> Sourced:
        if self.sources.metrics_url:
            return self._prometheus(name, label)
        if path := self._serves("metrics"):
            return self._http(path)
        return Sourced(PROCESS, self.process.metrics())

    def release_info(self, version: str | None = None) -> Sourced:
        if path := self._serves("release"):
            return self._http(path, {"version": version} if version else None)
        return Sourced(PROCESS, self.process.release_info(version))

    def logs(self, limit: int = 10, level: str | None = None, since: str | None = None) -> Sourced:
        limit = max(0, min(limit, MAX_READ))
        start = since_time(since) if since else None
        if self.sources.log_files or self.sources.journal_unit:
            entries = [
                entry
                for entry in self._log_entries()
                if _at_least(entry, level)
                and (start is None or str(entry.get("time") or "") >= start)
            ]
            return Sourced(self._log_source, LogLines(entries[-limit:] if limit else []))
        if path := self._serves("logs"):
            query: dict[str, Any] = {"limit": limit}
            if level:
                query["level"] = level
            if start:
                query["since"] = start
            return self._http(path, query)
        return Sourced(PROCESS, self.process.logs(limit, level, since))

    def errors(self, limit: int = 10, include_stack: bool = False) -> Sourced:
        limit = max(0, min(limit, MAX_READ))
        if path := self._serves("errors"):
            query = {"limit": limit, "includeStack": str(include_stack).lower()}
            return self._http(path, query)
        if self.sources.log_files or self.sources.journal_unit:
            grouped = group_errors(self._log_lines(), self.root, include_stack)
            return Sourced(self._log_source, ErrorGroups(tuple(grouped[:limit])))
        return Sourced(PROCESS, self.process.errors(limit, include_stack))

    # Writes go to szrag's own counters -----------------------------------------------

    def record_command(self, outcome: Any) -> None:
        self.process.record_command(outcome)

    def record_tool(self, name: str, status: str, duration_ms: float) -> None:
        self.process.record_tool(name, status, duration_ms)

    def record_error(self, error: BaseException, where: str = "") -> Any:
        return self.process.record_error(error, where)

    # Sources -------------------------------------------------------------------------

    def _http(self, path: str, query: Mapping[str, Any] | None = None) -> Sourced:
        import httpx  # here: a keyless answer that reads no application does not load it

        assert self.sources.url is not None
        url = self.sources.url + path
        headers = {"Accept": "application/json"}
        if self.sources.token:
            headers["Authorization"] = f"Bearer {self.sources.token}"
        try:
            response = httpx.get(url, params=query, headers=headers, timeout=READ_TIMEOUT)
        except httpx.HTTPError as error:
            message = f"the application at {self.sources.url} did not answer: {error}"
            raise ToolError(message) from None
        if response.status_code >= 400:
            raise ToolError(f"the application answered {response.status_code} for {path}")
        try:
            body = response.json()
        except ValueError:
            raise ToolError(f"the application's {path} is not JSON") from None
        if isinstance(body, dict) and body.get("ok") is True and "data" in body:
            body = body["data"]
        data = body if isinstance(body, dict) else {"data": body}
        return Sourced(f"http {url}", data)

    def _prometheus(self, name: str | None, label: str | None) -> Sourced:
        """The exposition's samples (at most MAX_SAMPLES), filtered by name and label."""
        import httpx
        from prometheus_client.parser import text_string_to_metric_families

        assert self.sources.metrics_url is not None
        url = self.sources.metrics_url
        headers = {"Authorization": f"Bearer {self.sources.token}"} if self.sources.token else {}
        try:
            response = httpx.get(url, headers=headers, timeout=READ_TIMEOUT)
            response.raise_for_status()
            families = list(text_string_to_metric_families(response.text))
        except httpx.HTTPError as error:
            raise ToolError(f"the metrics at {url} could not be read: {error}") from None
        except ValueError as error:
            raise ToolError(
                f"the metrics at {url} are not a Prometheus exposition: {error}"
            ) from None
        key, _, value = (label or "").partition("=")
        samples = [
            {"name": sample.name, "labels": dict(sample.labels), "value": sample.value}
            for family in families
            for sample in family.samples
            if (not name or name.lower() in sample.name.lower())
            and (not key or sample.labels.get(key.strip()) == value.strip())
        ]
        shown = Samples(samples[:MAX_SAMPLES], len(samples), len(samples) > MAX_SAMPLES)
        return Sourced(f"prometheus {url}", shown)

    def _log_paths(self) -> list[Path]:
        """Every file the globs name with its rotations, oldest first."""
        found: set[Path] = set()
        for pattern in self.sources.log_files:
            base = pattern if Path(pattern).is_absolute() else str(self.root / pattern)
            for match in glob.glob(base) + glob.glob(base + ".[0-9]*"):
                path = Path(match)
                if path.is_file():
                    found.add(path)
        return sorted(found, key=lambda path: (path.stat().st_mtime, -_rotation(path)))

    @property
    def _log_source(self) -> str:
        if self.sources.log_files:
            return "log files"
        return f"journal of {self.sources.journal_unit}"

    def _log_lines(self) -> list[str]:
        if not self.sources.log_files and self.sources.journal_unit:
            return journal_lines(read_journal(self.sources.journal_unit))
        lines: list[str] = []
        for path in self._log_paths():
            lines.extend(_read_tail(path))
        return lines

    def _log_entries(self) -> list[dict[str, Any]]:
        """One entry per record: a plain line without a time of its own (a traceback's)
        continues the record before it."""
        entries: list[dict[str, Any]] = []
        for line in self._log_lines():
            stripped = line.strip()
            continues = entries and not _TIME.match(stripped) and not stripped.startswith("{")
            if continues and stripped:
                last = entries[-1]
                if len(str(last["message"])) < 8000:
                    last["message"] = f"{last['message']}\n{line.rstrip()}"
                continue
            if (entry := parse_entry(line)) is not None:
                entries.append(entry)
        return entries


_UNIT = re.compile(r"[A-Za-z0-9:_.@\\-]+")
JOURNAL_LINES = 2000
_PRIORITIES = ("critical", "critical", "critical", "error", "warning", "info", "info", "debug")
_CONTINUATION = re.compile(
    r"^(\s|Traceback \(most recent call last\)|[A-Za-z_][\w.]*(Error|Exception):)"
)


def read_journal(unit: str, lines: int = JOURNAL_LINES) -> list[dict[str, Any]]:
    """The unit's latest journal records (``journalctl -u UNIT -o json``), oldest first."""
    if shutil.which("journalctl") is None:
        raise ToolError("journalctl is not installed here: the journal cannot be read")
    try:
        done = subprocess.run(
            ["journalctl", "-u", unit, "-o", "json", "-n", str(lines), "--no-pager"],
            capture_output=True,
            text=True,
            timeout=READ_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"the journal of {unit} could not be read: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"journalctl failed: {done.stderr.strip()[:300]}")
    records = []
    for line in done.stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def journal_lines(records: list[dict[str, Any]]) -> list[str]:
    """Journal records as the log lines the readers take: ``TIME LEVEL message`` for a record,
    the message alone for a traceback's own lines (each is a record of its own)."""
    lines = []
    for record in records:
        message = record.get("MESSAGE")
        if isinstance(message, list):  # journald stores non-UTF-8 messages as bytes
            message = bytes(value for value in message if isinstance(value, int)).decode(
                "utf-8", "replace"
            )
        if not isinstance(message, str):
            continue
        if _CONTINUATION.match(message):
            lines.append(message)
            continue
        try:
            moment = utc_timestamp(int(str(record.get("__REALTIME_TIMESTAMP"))) / 1_000_000)
        except ValueError:
            moment = ""
        try:
            level = _PRIORITIES[int(str(record.get("PRIORITY", 6)))]
        except (ValueError, IndexError):
            level = "info"
        lines.append(f"{moment} {level.upper()} {message}".strip())
    return lines


def _rotation(path: Path) -> int:
    """``app.log.2.gz`` -> 2 (older), ``app.log`` -> 0."""
    found = re.search(r"\.(\d+)(?:\.gz)?$", path.name)
    return int(found.group(1)) if found else 0


def _read_tail(path: Path) -> list[str]:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as handle:
                data = handle.read(MAX_LOG_BYTES)
        else:
            with path.open("rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(max(0, size - MAX_LOG_BYTES))
                data = handle.read()
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def log_time(written: object) -> str | None:
    """A log's own time (``2026-12-01 13:06:13,454``, ISO with or without a zone, epoch
    seconds) in the public form; a time without a zone is the machine's local time."""
    if isinstance(written, int | float) and not isinstance(written, bool):
        return utc_timestamp(float(written))
    if not isinstance(written, str) or not written.strip():
        return None
    text = written.strip().replace(",", ".").replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # local time, as a logging.Formatter writes it
    return utc_timestamp(moment)


def parse_entry(line: str) -> dict[str, Any] | None:
    """One log line as ``{time, level, message}`` (a JSON line keeps its own fields)."""
    stripped = line.strip()
    if not stripped:
        return None
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, dict):
            level = str(value.get("level") or value.get("levelname") or value.get("severity") or "")
            message = value.get("message") or value.get("msg") or value.get("event") or ""
            time = value.get("time") or value.get("timestamp") or value.get("ts")
            return {
                **value,
                "time": log_time(time) or time,
                "level": level.lower() or None,
                "message": message,
            }
    found_level = _LEVEL.search(stripped)
    found_time = _TIME.match(stripped)
    return {
        "time": log_time(found_time.group(1)) if found_time else None,
        "level": found_level.group(1).lower().replace("fatal", "critical") if found_level else None,
        "message": stripped[:2000],
    }


def _at_least(entry: Mapping[str, Any], level: str | None) -> bool:
    if not level:
        return True
    wanted = LEVELS.get(level.lower(), 0)
    return LEVELS.get(str(entry.get("level") or "").lower(), 0) >= wanted


@dataclass(frozen=True, slots=True)
class ErrorGroup:
    """The errors of one type and message in a log: how many, first and last time seen, the
    innermost frame inside the repository (``{path, line}``), the ERROR record that logged
    it and (when asked for) the last traceback."""

    type: str
    message: str
    count: int
    first_seen: str | None
    where: Mapping[str, Any] | None
    last_seen: str | None
    logged: str | None = field(default=None, metadata=public(omit_none=True))
    stack: str | None = field(default=None, metadata=public(omit_none=True))


def group_errors(lines: list[str], root: Path, include_stack: bool) -> list[ErrorGroup]:
    """ERROR records and tracebacks in ``lines``, grouped by type and message, most recent
    group first: count, first and last time seen, the innermost frame in the repository."""
    groups: dict[tuple[str, str], ErrorGroup] = {}
    last_time: str | None = None
    frames: list[tuple[str, int]] = []
    stack: list[str] = []
    in_traceback = False

    pending: str | None = None  # an ERROR record whose traceback may follow

    def add(
        kind: str, message: str, frame: tuple[str, int] | None, logged: str | None = None
    ) -> None:
        key = (kind, re.sub(r"\d+", "N", message)[:300])
        group = groups.pop(key, None) or ErrorGroup(kind, message[:500], 0, last_time, None, None)
        groups[key] = replace(  # most recent last
            group,
            count=group.count + 1,
            last_seen=last_time,
            logged=logged[:500] if logged else group.logged,
            where={"path": frame[0], "line": frame[1]} if frame is not None else group.where,
            stack="\n".join(stack[-40:]) if include_stack and stack else group.stack,
        )

    for line in lines:
        entry_time = _TIME.match(line.strip())
        if entry_time and pending is not None:  # an ERROR record without a traceback
            add("error", pending, None)
            pending = None
        if entry_time:
            last_time = log_time(entry_time.group(1)) or entry_time.group(1)
        if line.startswith("Traceback (most recent call last)"):
            in_traceback, frames, stack = True, [], [line]
            continue
        if in_traceback:
            stack.append(line)
            frame = _FRAME.match(line)
            if frame:
                inside = _repository_path(frame.group("file"), root)
                if inside is not None:
                    frames.append((inside, int(frame.group("line"))))
                continue
            exception = _EXCEPTION.match(line.strip())
            if exception:
                innermost = frames[-1] if frames else None
                add(exception.group("type"), exception.group("message"), innermost, pending)
                in_traceback, pending = False, None
            continue
        entry = parse_entry(line)
        if entry is not None and entry.get("level") in ("error", "critical"):
            stack = []
            pending = str(entry.get("message") or "")
    if pending is not None:
        add("error", pending, None)
    return list(reversed(groups.values()))


def _repository_path(file: str, root: Path) -> str | None:
    try:
        return Path(file).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


MAX_LIVE_CHARS = 2000
_URL_PATH = re.compile(r"(?<![\w/.])/[A-Za-z0-9_\-./{}:]*[A-Za-z0-9_\-}]")


def matching_errors(
    live: ApplicationRuntime, question: str, files: set[str]
) -> tuple[str, list[dict[str, Any]]]:
    """The running application's errors that belong to the code a question is about: those
    raised in one of ``files`` or naming a URL path the question names. Returns the source
    and the errors (most recent group first); a source that cannot be read gives none."""
    try:
        found = public_dict(live.errors(20, False))
    except ToolError:
        return "unavailable", []
    routes = set(_URL_PATH.findall(question))
    matched = []
    for error in found.get("errors") or []:
        if not isinstance(error, dict):
            continue
        where = error.get("where") if isinstance(error.get("where"), dict) else {}
        said = f"{error.get('message') or ''} {error.get('logged') or ''}"
        if (where or {}).get("path") in files or any(route in said for route in routes):
            matched.append(error)
    return str(found.get("source") or "runtime"), matched


def errors_text(source: str, errors: list[dict[str, Any]]) -> str:
    """The matched errors as lines for the model (bounded)."""
    lines = [f"Source: {source}"]
    for error in errors:
        where = error.get("where") or {}
        place = f" at {where.get('path')}:{where.get('line')}" if where else ""
        seen = f", last seen {error.get('lastSeen')}" if error.get("lastSeen") else ""
        logged = f"; logged as: {error.get('logged')}" if error.get("logged") else ""
        lines.append(
            f"- {error.get('type')}: {error.get('message')} ({error.get('count', 1)} times{seen})"
            f"{place}{logged}"
        )
    return "\n".join(lines)[:MAX_LIVE_CHARS]


_COMMIT_KEYS = ("commit", "gitSha", "git_sha", "sha", "revision", "gitCommit")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


def running_commit(live: ApplicationRuntime, status: Mapping[str, Any] | None = None) -> str | None:
    """The commit the running application was built from: the configured ``commit_file``,
    else what its status (read now, or the one given) says (``commit``, ``gitSha``,
    ``revision`` ..., or ``deployment.gitSha``: ``GIT_SHA`` for szrag's own process)."""
    if live.sources.commit_file:
        written = live.sources.commit_file
        path = Path(written) if Path(written).is_absolute() else live.root / written
        try:
            value = path.read_text(encoding="utf-8").strip().lower()
        except OSError:
            value = ""
        if _COMMIT.match(value):
            return value
    if status is None:
        try:
            status = public_dict(live.status())
        except ToolError:
            return None
    places = [status, status.get("deployment") if isinstance(status, dict) else None]
    for place in places:
        if not isinstance(place, dict):
            continue
        for key in _COMMIT_KEYS:
            said = place.get(key)
            if isinstance(said, str) and _COMMIT.match(said.strip().lower()):
                return said.strip().lower()
    return None


def changed_since(root: Path, commit: str, paths: list[str]) -> dict[str, int]:
    """Per path, the commits of the checkout at ``root`` since ``commit`` that changed it
    (paths unchanged left out); empty when git or the commit is not available."""
    changed: dict[str, int] = {}
    for path in paths[:12]:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), "rev-list", "--count", f"{commit}..HEAD", "--", path],
                capture_output=True,
                text=True,
                timeout=3,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return {}
        if done.returncode != 0:
            return {}  # not a git checkout, or the running commit is not in it
        count = int(done.stdout.strip() or 0)
        if count:
            changed[path] = count
    return changed


def drift_text(commit: str, changed: dict[str, int]) -> str:
    """What the model (and the answer) is told when cited files moved since the release."""
    listed = ", ".join(
        f"{path} changed in {count} commit{'s' if count != 1 else ''}"
        for path, count in changed.items()
    )
    return (
        f"The running application was built from commit {commit[:12]}; since then {listed}:"
        " the code shown is newer than the code that runs."
    )


def environment_names(
    live: ApplicationRuntime, status: Mapping[str, Any] | None = None
) -> set[str] | None:
    """The names of the environment variables the running application has set, as its
    status reports them (``environment``: a list of names or a mapping of name to set?) or
    as its systemd unit defines them; None when neither says. Values are never read."""
    if status is None:
        try:
            status = public_dict(live.status())
        except ToolError:
            status = {}
    reported = status.get("environment") if isinstance(status, Mapping) else None
    if isinstance(reported, list):
        return {str(name) for name in reported if isinstance(name, str)}
    if isinstance(reported, Mapping):
        return {str(name) for name, value in reported.items() if value not in (False, None, "")}
    unit = live.sources.journal_unit
    if unit:
        if shutil.which("systemctl") is None:
            return None
        try:
            done = subprocess.run(
                ["systemctl", "show", unit, "-p", "Environment", "--value"],
                capture_output=True,
                text=True,
                timeout=READ_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0:
            return {item.split("=", 1)[0] for item in done.stdout.split() if "=" in item}
    return None


def environment_text(names: set[str], wanted: list[str]) -> str:
    """Which of ``wanted`` the running application has set (names only)."""
    said = ", ".join(f"{name} {'set' if name in names else 'not set'}" for name in wanted)
    return f"Environment of the running application: {said}."
