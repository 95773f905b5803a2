"""The repositories one service answers about: named, read from options or a service file.

A service holds one repository (``--root``, as always) or several, each with a name users
scope their questions by::

    szrag serve --repo api=../api --repo web=../web
    szrag serve --config szrag.toml

and the service file lists them with what belongs to each::

    memory_mb = 1024                  # the views of all repositories kept in memory, at most
    fetch_interval = 300              # seconds between fetches of each cloned repository (0: off)

    [[repositories]]
    name = "api"
    path = "../api"                   # relative to the file
    slack_channels = ["C0123ABCD"]    # questions in these channels are about this repository

    [[repositories]]
    name = "web"
    url = "https://github.com/example/web.git"   # cloned into the service's data folder
    branch = "main"                   # default: the remote's default branch
    webhook_secret_env = "WEB_WEBHOOK_SECRET"    # the variable holding its push webhook's secret

A name is a word of letters, digits, ``.``, ``_`` and ``-`` (no slash: it is a path segment of
links and an ``in:NAME`` word of a Slack message); two repositories with one name, a path
that is no folder or a repository with neither path nor URL are refused with a message that
names the entry. A URL's credentials (``https://user:token@host/...``) are never shown:
:func:`shown_url` is the URL with its user information removed, in listings, states and
errors. The webhook secret itself is never in the file, only the name of the environment
variable that holds it, read by the service from the environment it is given.
"""

from __future__ import annotations

import re
import tomllib
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from szrag.base.errors import RepositoryError, UnknownRepository
from szrag.base.public import public

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DEFAULT_MEMORY_MB = 1024  # a small VM's share for in-memory views
SERVICE_FILE = "szrag.toml"
HOME = ".szrag"  # beside the service file: the service's own data (conversations, audit log)
CLONES = f"{HOME}/repositories"  # where remote repositories are cloned
DEFAULT_FETCH_INTERVAL = 300.0  # seconds: a push shows within five minutes without a webhook
_KEYS = frozenset({"name", "path", "url", "branch", "slack_channels", "webhook_secret_env"})
_TOP_KEYS = frozenset({"memory_mb", "fetch_interval", "repositories"})
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def shown_url(url: str) -> str:
    """``url`` fit to show and log: without its user information (``user:token@``) when it
    is a URL with a scheme; an scp-like ``git@host:path`` names no secret and is kept."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return _USERINFO.sub(r"\1", url)
    if parts.scheme and "@" in parts.netloc:
        return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return url


def _shown(url: object) -> object:
    return shown_url(url) if isinstance(url, str) else url


def without_credentials(text: str) -> str:
    """``text`` (git's error output, say) with every URL's user information removed."""
    return _USERINFO.sub(r"\1", text)


def checked_name(name: str, *, where: str = "repository") -> str:
    """``name`` when it can name a repository, else RepositoryError saying why."""
    if not NAME.fullmatch(name):
        raise RepositoryError(
            f"{where}: {name!r} cannot name a repository: use letters, digits, '.', '_' and '-'"
            " (at most 64, no slash or space)"
        )
    return name


@dataclass(frozen=True, slots=True)
class RepositorySpec:
    """One repository of a service: its name and where its code lives (a folder here, or a
    git URL and branch cloned into ``path``)."""

    name: str
    path: Path = field(metadata=public(name="folder"))  # public "path"s are files' in a repository
    url: str | None = field(default=None, metadata=public(convert=_shown))
    branch: str | None = None
    slack_channels: tuple[str, ...] = ()
    webhook_secret_env: str | None = None  # the environment variable holding the secret

    @property
    def remote(self) -> bool:
        """Whether the code is cloned from ``url`` rather than read where it lies."""
        return self.url is not None

    @property
    def shown_url(self) -> str | None:
        """The URL without credentials (see :func:`shown_url`)."""
        return shown_url(self.url) if self.url is not None else None

    @classmethod
    def parse(cls, option: str, *, base: Path | None = None) -> RepositorySpec:
        """``NAME=PATH`` or ``NAME=URL[#BRANCH]`` as ``--repo`` takes it: a relative path from
        ``base`` (default the working folder); a git URL (``scheme://...`` or scp-like
        ``user@host:path``) cloned into ``base``'s ``.szrag/repositories/NAME``."""
        name, equals, path = option.partition("=")
        if not equals or not path:
            raise RepositoryError(f"--repo {option!r}: give NAME=PATH or NAME=URL")
        where = f"--repo {shown_url(option)}"
        checked = checked_name(name.strip(), where=where)
        if is_git_url(path):
            url, _, branch = path.partition("#")
            if path.endswith("#") or url.startswith("-"):
                raise RepositoryError(f"{where}: give NAME=URL or NAME=URL#BRANCH")
            folder = (base or Path.cwd()) / CLONES / checked
            return cls(checked, folder.resolve(), url, branch or None)
        folder = (base or Path.cwd()) / Path(path).expanduser()
        return cls(checked, folder.resolve())


@dataclass(frozen=True, slots=True)
class ServicePlan:
    """A service's repositories, in the order given, its memory budget and how often its
    cloned repositories are fetched."""

    repositories: tuple[RepositorySpec, ...]
    memory_mb: int = DEFAULT_MEMORY_MB
    file: Path | None = None  # the service file read, if any
    data: Path | None = None  # where remote repositories are cloned (a replica: its own files)
    # where the service keeps conversations, feedback (and, in PostgreSQL, the audit log): a
    # path or a postgresql:// URL, which may hold a password (None: ``home``'s conversations.db)
    conversations: str | Path | None = field(default=None, repr=False, metadata=public(hidden=True))
    fetch_interval: float = DEFAULT_FETCH_INTERVAL  # seconds; 0: fetched on webhooks alone
    # a replica's: the PostgreSQL store every repository is read from (no checkout); each
    # repository's path is then a folder of this replica's own
    store: str | None = field(default=None, repr=False, metadata=public(hidden=True))

    def names(self) -> list[str]:
        """The repositories' names, in order."""
        return [spec.name for spec in self.repositories]

    @property
    def home(self) -> Path:
        """Where the service keeps its own data, its conversations and audit log: ``.szrag``
        beside the service file; for ``--repo`` options (no file), the first repository's
        ``.rag/service``."""
        if self.file is not None:
            return self.file.parent / HOME
        if not self.repositories:
            raise RepositoryError("a service needs at least one repository")
        return self.repositories[0].path / ".rag" / "service"

    @property
    def conversations_at(self) -> str | Path:
        """Where the service's one conversation store is: ``conversations`` if set, else
        ``home``'s ``conversations.db``."""
        return self.conversations or self.home / "conversations.db"

    def named(self, name: str) -> RepositorySpec:
        """The repository called ``name``; UnknownRepository listing the known ones."""
        for spec in self.repositories:
            if spec.name == name:
                return spec
        known = ", ".join(self.names()) or "none"
        raise UnknownRepository(f"no repository is called {name!r} (known: {known})")

    def first_present(self) -> RepositorySpec | None:
        """The first repository whose code is on disk now: a folder, or a clone made before
        (None when every repository is still to be cloned)."""
        return next((spec for spec in self.repositories if spec.path.is_dir()), None)

    def configured_root(self) -> Path:
        """Whose repository file configures a server of this plan: the first repository on
        disk, else (every one still to be cloned) the service file's folder."""
        first = self.first_present()
        if first is not None:
            return first.path
        return self.file.parent if self.file is not None else self.repositories[0].path

    def for_channel(self, channel: str) -> RepositorySpec | None:
        """The repository a Slack channel is about, if one names it."""
        return next((spec for spec in self.repositories if channel in spec.slack_channels), None)

    def with_repositories(self, specs: Iterable[RepositorySpec]) -> ServicePlan:
        """This plan with ``specs`` instead, checked as a whole."""
        return replace(self, repositories=checked(tuple(specs)))


def checked(specs: Sequence[RepositorySpec]) -> tuple[RepositorySpec, ...]:
    """``specs`` when their names are distinct and each local path is a folder."""
    seen: dict[str, RepositorySpec] = {}
    for spec in specs:
        if spec.name in seen:
            raise RepositoryError(f"two repositories are called {spec.name!r}: names must differ")
        seen[spec.name] = spec
        if not spec.remote and not spec.path.is_dir():
            raise RepositoryError(f"repository {spec.name!r}: {spec.path} is not a folder")
    return tuple(specs)


def plan_from_options(options: Sequence[str], *, memory_mb: int | None = None) -> ServicePlan:
    """The plan of ``--repo NAME=PATH`` (or ``NAME=URL``) options; a URL's clone goes to the
    working folder's ``.szrag/repositories``."""
    specs = checked([RepositorySpec.parse(option) for option in options])
    data = (Path.cwd() / CLONES).resolve() if any(spec.remote for spec in specs) else None
    return ServicePlan(specs, memory_mb if memory_mb is not None else DEFAULT_MEMORY_MB, data=data)


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")


def is_git_url(text: str) -> bool:
    """Whether ``text`` names a git remote rather than a folder: a URL with a scheme
    (``https://``, ``ssh://``, ``file://``...) or scp-like ``user@host:path``."""
    return bool(_SCHEME.match(text) or _SCP_LIKE.match(text))


def replica_plan(
    store: str, names: Sequence[str], data: Path, *, memory_mb: int | None = None
) -> ServicePlan:
    """The plan of a replica serving the repositories ``names`` published to ``store``: the
    code read from the store alone, and the conversations, feedback and audit log kept in the
    same database, so every replica continues every conversation; each repository's folder
    ``data/NAME`` (made here) holds only what a replica keeps of its own."""
    specs = []
    for name in names:
        folder = data / checked_name(name, where=f"repository {name!r} of the store")
        folder.mkdir(parents=True, exist_ok=True)
        specs.append(RepositorySpec(name, folder.resolve()))
    return ServicePlan(
        checked(specs),
        memory_mb if memory_mb is not None else DEFAULT_MEMORY_MB,
        data=data.resolve(),
        conversations=store,
        store=store,
    )


def read_service_file(path: Path) -> ServicePlan:
    """The plan a service file describes (see the module); RepositoryError naming the file and
    the entry for anything it cannot use."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RepositoryError(f"{path}: cannot be read ({error.strerror or error})") from error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RepositoryError(f"{path}: not valid TOML ({error})") from error
    base = path.resolve().parent
    data_folder = base / CLONES
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise RepositoryError(f"{path}: unknown key(s) {', '.join(unknown)}")
    entries = data.get("repositories", [])
    if not isinstance(entries, list) or not all(isinstance(item, dict) for item in entries):
        raise RepositoryError(f"{path}: [[repositories]] must be tables")
    specs = [
        _spec_of(entry, number, path, base, data_folder) for number, entry in enumerate(entries, 1)
    ]
    memory = data.get("memory_mb", DEFAULT_MEMORY_MB)
    if not isinstance(memory, int) or isinstance(memory, bool) or memory < 0:
        raise RepositoryError(f"{path}: memory_mb must be a whole number of megabytes")
    interval = data.get("fetch_interval", DEFAULT_FETCH_INTERVAL)
    if not isinstance(interval, int | float) or isinstance(interval, bool) or interval < 0:
        raise RepositoryError(f"{path}: fetch_interval must be a number of seconds (0: off)")
    return ServicePlan(
        checked(specs), memory, path.resolve(), data_folder, fetch_interval=float(interval)
    )


def _spec_of(
    entry: Mapping[str, Any], number: int, path: Path, base: Path, data: Path
) -> RepositorySpec:
    where = f"{path}: repository {number}"
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise RepositoryError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = entry.get("name")
    if not isinstance(name, str):
        raise RepositoryError(f"{where}: give it a name")
    checked_name(name, where=where)
    channels = entry.get("slack_channels", [])
    if not isinstance(channels, list) or not all(isinstance(item, str) for item in channels):
        raise RepositoryError(f"{where}: slack_channels must be a list of channel ids")
    url, local, branch = entry.get("url"), entry.get("path"), entry.get("branch")
    if (url is None) == (local is None):
        raise RepositoryError(f"{where} ({name}): give either path or url")
    if branch is not None and (url is None or not isinstance(branch, str) or not branch):
        raise RepositoryError(f"{where} ({name}): branch is the branch of a url")
    secret = entry.get("webhook_secret_env")
    if secret is not None and (url is None or not isinstance(secret, str)):
        raise RepositoryError(f"{where} ({name}): webhook_secret_env belongs to a url")
    if secret is not None and not VARIABLE.fullmatch(secret):
        raise RepositoryError(
            f"{where} ({name}): webhook_secret_env names an environment variable"
            " (the secret itself is not written in the file)"
        )
    if url is not None:
        if not isinstance(url, str) or not url.strip() or url.startswith("-"):
            raise RepositoryError(f"{where} ({name}): url must be a git URL")
        return RepositorySpec(name, data / name, url, branch, tuple(channels), secret)
    if not isinstance(local, str) or not local:
        raise RepositoryError(f"{where} ({name}): path must be a folder")
    folder = (base / Path(local).expanduser()).resolve()
    return RepositorySpec(name, folder, None, None, tuple(channels))


def write_service_file(plan: ServicePlan, path: Path) -> None:
    """Write ``plan`` as a service file at ``path`` (``szrag repos add``/``remove``): paths
    relative to the file's folder where they lie under it."""
    base = path.resolve().parent
    lines = [f"memory_mb = {plan.memory_mb}"]
    if plan.fetch_interval != DEFAULT_FETCH_INTERVAL:
        lines.append(f"fetch_interval = {plan.fetch_interval:g}")
    lines.append("")
    for spec in plan.repositories:
        lines.append("[[repositories]]")
        lines.append(f"name = {_toml_string(spec.name)}")
        if spec.url is not None:
            lines.append(f"url = {_toml_string(spec.url)}")
            if spec.branch:
                lines.append(f"branch = {_toml_string(spec.branch)}")
            if spec.webhook_secret_env:
                lines.append(f"webhook_secret_env = {_toml_string(spec.webhook_secret_env)}")
        else:
            shown = spec.path
            if shown.is_relative_to(base):
                shown = shown.relative_to(base)
            lines.append(f"path = {_toml_string(shown.as_posix() or '.')}")
        if spec.slack_channels:
            channels = ", ".join(_toml_string(channel) for channel in spec.slack_channels)
            lines.append(f"slack_channels = [{channels}]")
        lines.append("")
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("\n".join(lines), encoding="utf-8")
    temporary.replace(path)  # a reader sees the old file or the new one, never half


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


@dataclass
class RepositoryState:
    """What a service reports of one repository (``GET /api/repositories``)."""

    name: str
    state: str = "pending"  # pending, cloning, indexing, ready, failed
    files: int | None = None
    indexed_at: str | None = None
    commit: str | None = None
    error: str | None = None  # why it failed, or why its last fetch did (still served)
    loaded: bool = False  # its views are in memory now
    channels: tuple[str, ...] = field(default_factory=tuple)
    url: str | None = field(default=None, metadata=public(omit_none=True))  # shown_url's
    fetched_at: str | None = field(default=None, metadata=public(omit_none=True))
