"""One service over several repositories: a host per repository, opened on first use, and the
in-memory views of all of them kept within one memory budget.

A server answers many questions, so each repository's index is kept with views in memory
(ranking arrays, code records, file views: about 26 MiB per 1,000 files). Fifty repositories
must not cost fifty sets of views: :class:`Service` opens a repository's index when it is
first asked about, estimates what its views hold, and when the estimates of all loaded
repositories pass the budget (``memory_mb``) drops the views of the one asked least recently
(its index stays open; the next question about it builds them again, while an unscoped
search reads it from the store alone). A question without a repository is searched in every
repository, their files merged on one scale (``service/merging.py``), and answered by the
repository of the best file of all (``route``).

The service keeps one conversation store and one audit log for all its repositories
(``conversations.db`` and ``audit.log`` in its data folder, ``ServicePlan.home``; or where
``ServicePlan.conversations`` says, or a store given: a ``postgresql://`` URL for replicas
sharing one database, whose audit log is then a table of that database). Each repository's host sees them through a view
tagged with its name, so each conversation, feedback and audit line records its repository,
and ``repository_of`` finds the repository of a conversation with one lookup.

A repository cloned from a URL (``service/clones.py``, kept current by ``service/remotes.py``)
cannot be opened before its clone is made: a question to it is a
:class:`~szrag.base.errors.RepositoryUnavailable` (503) saying it is being cloned or why its
clone failed, and the other repositories answer meanwhile. A local repository whose folder is
gone is the same error and a ``failed`` state until the folder is back. Each webhook secret
named in the plan (``webhook_secret_env``) is read from the environment the service is given,
once, here: a variable named but not set is a ConfigError before anything is served.

A replica's plan names a PostgreSQL store (``ServicePlan.store``): each repository is then
opened from it by name (``PostgresIndex``), with no checkout, and configured as its published
generation was built; everything else is the same service.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from szrag.answer.elsewhere import ELSEWHERE_FILES, MergedSource, offered_elsewhere
from szrag.base.config import RepoConfig
from szrag.base.errors import (
    ConfigError,
    RepositoryError,
    RepositoryUnavailable,
    StoreUnavailable,
    SzragError,
)
from szrag.base.public import public_timestamp, utc_timestamp
from szrag.conversations import ConversationMemory, open_conversation_store
from szrag.index.protocol import IndexStore
from szrag.index.shared import SharedIndex, open_shared_index
from szrag.rank.retrieve import Source, require_question, retrieve
from szrag.rank.words import query_terms
from szrag.runtime.git import read_git_head
from szrag.service.audit import AuditLog, service_audit_path
from szrag.service.configuration import Config, load_config
from szrag.service.host import Host
from szrag.service.merging import Searched, TermCounts, likeliest, merge
from szrag.service.repositories import RepositorySpec, RepositoryState, ServicePlan

log = logging.getLogger("szrag.service")

VIEW_KIB_PER_FILE = 26  # measured: a server's RSS grows about 26 MiB per 1,000 files
VIEW_BASE_MIB = 8  # what a repository's views cost before its first file
ROUTE_SOURCES = 8  # the files each repository is searched for (the answer's default)
ELSEWHERE_SCORE_SHARE = 0.5  # another repository's file offered beside: half the best score


@dataclass(frozen=True, slots=True)
class Routed:
    """Where an unscoped question goes: the chosen repository, how each scored, the chosen
    one's own sources and the best sources of all the repositories merged."""

    repository: str
    scores: tuple[tuple[str, float], ...]  # (repository, its best file's shared score), best first
    sources: tuple[Source, ...]  # the chosen repository's sources, as it retrieved them
    merged: tuple[MergedSource, ...] = ()  # every repository's best files, on one scale
    likeliest: str | None = None  # the repository likeliest to have produced the words

    def elsewhere(self, files: int = ELSEWHERE_FILES) -> tuple[MergedSource, ...]:
        """The other repositories' sources an answer is offered beside the chosen one's:
        those of their first ``files`` files in the merged ranking scoring above nothing and
        at least ``ELSEWHERE_SCORE_SHARE`` of its best."""
        best = self.merged[0].shared_score if self.merged else 0.0
        close = [
            item
            for item in self.merged
            if item.shared_score > 0 and item.shared_score >= ELSEWHERE_SCORE_SHARE * best
        ]  # a file that scores nothing is no evidence, however the best one scores
        return tuple(offered_elsewhere(close, self.repository, files))


class Opened:
    """One repository's open index and host, with what its views are thought to cost."""

    def __init__(self, index: IndexStore, host: Host) -> None:
        self.index = index
        self.host = host
        self.files = index.counts()["files"]
        self.last_asked = time.monotonic()
        self.views = True

    @property
    def cost_mib(self) -> float:
        """The estimated memory of this repository's views while they are kept."""
        return VIEW_BASE_MIB + self.files * VIEW_KIB_PER_FILE / 1024 if self.views else 0.0


class Service:
    """The repositories of one service by name (see the module). Thread-safe; opening a
    repository blocks, so async callers run ``host`` in a worker thread."""

    def __init__(
        self,
        plan: ServicePlan,
        environ: Mapping[str, str],
        *,
        configure: Callable[[Config], Config] | None = None,
        opener: Callable[[Path], IndexStore] = open_shared_index,
        conversations: ConversationMemory | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        if not plan.repositories:
            raise RepositoryError("a service needs at least one repository")
        self.plan = plan
        # one store and one log for every repository (closed with the service)
        self.conversations: ConversationMemory = conversations or open_conversation_store(
            plan.conversations_at
        )
        self.audit = audit or AuditLog.beside(
            self.conversations, service_audit_path(plan.home, environ)
        )
        # read once, each repository's file with the one environment: a bad value fails here
        # (a folder that appears later, a clone say, is read when it is first opened)
        self._environ = environ
        self._configure = configure
        self.configs: dict[str, Config] = {
            spec.name: self._config_of(spec) for spec in plan.repositories if spec.path.is_dir()
        }
        self.states = {
            spec.name: RepositoryState(spec.name, channels=spec.slack_channels, url=spec.shown_url)
            for spec in plan.repositories
        }
        self._secrets = webhook_secrets(plan, environ)
        self._gone: set[str] = set()  # local repositories whose folder has vanished
        # a checkout's index is opened from its folder; a replica's from its store by name
        self._opener: Callable[[RepositorySpec], IndexStore] = (
            _store_opener(plan.store) if plan.store is not None else lambda spec: opener(spec.path)
        )
        self._opened: OrderedDict[str, Opened] = OrderedDict()  # least recently asked first
        self._opening: dict[str, threading.Lock] = {
            spec.name: threading.Lock() for spec in plan.repositories
        }
        self._lock = threading.Lock()
        self._closed = False

    # --- names ---------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The repositories' names, in the order configured."""
        return self.plan.names()

    def spec(self, name: str) -> RepositorySpec:
        """The repository called ``name`` (UnknownRepository otherwise)."""
        return self.plan.named(name)

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment the service was given (git runs in it)."""
        return self._environ

    def webhook_secret(self, name: str) -> str | None:
        """The secret a push webhook of repository ``name`` is signed with (None: it has no
        webhook). Never shown or logged."""
        return self._secrets.get(name)

    @property
    def single(self) -> bool:
        """Whether the service holds one repository (every question is about it)."""
        return len(self.plan.repositories) == 1

    # --- hosts ---------------------------------------------------------------------------

    def host(self, name: str) -> Host:
        """The host of repository ``name``, its index built or refreshed and opened on first
        use; its views are rebuilt when they were dropped. Blocks while it opens.
        RepositoryUnavailable while it cannot answer (being cloned, its folder gone)."""
        spec = self.spec(name)
        self._check_folder(spec)
        with self._lock:
            opened = self._opened.get(name)
            if opened is not None:
                self._touch(name, opened)
                return opened.host
        with self._opening[name]:  # one opening per repository, however many ask at once
            with self._lock:
                opened = self._opened.get(name)
                if opened is not None:
                    self._touch(name, opened)
                    return opened.host
            opened = self._open(spec)
            with self._lock:
                if self._closed:
                    opened.index.close()
                    raise RepositoryError("the service is closing")
                self._opened[name] = opened
                self._touch(name, opened)
            return opened.host

    def index(self, name: str) -> IndexStore:
        """The open index of repository ``name`` (opened by ``host`` if it is not): a
        checkout's shared index, or a replica's store."""
        return self._opened_index(name)

    def shared_index(self, name: str) -> SharedIndex:
        """The open shared index of repository ``name``, a checkout's (what a watcher
        refreshes); RepositoryError on a replica, whose store its indexer refreshes."""
        index = self._opened_index(name)
        if not isinstance(index, SharedIndex):
            raise RepositoryError(
                f"repository {name!r} is read from a store: its indexer refreshes it"
            )
        return index

    def _opened_index(self, name: str) -> IndexStore:
        """The index of ``name`` for routing: opened if it is not, but not counted as asked
        (routing reads counts, so it keeps no repository's views alive); a local repository
        whose folder is gone is RepositoryUnavailable, so routing passes it by."""
        self._check_folder(self.spec(name))
        with self._lock:
            opened = self._opened.get(name)
        if opened is None:
            self.host(name)
            with self._lock:
                opened = self._opened[name]
        return opened.index

    def opened(self) -> list[str]:
        """The repositories whose index is open now, least recently asked first."""
        with self._lock:
            return list(self._opened)

    def loaded(self) -> list[str]:
        """The repositories whose views are in memory now."""
        with self._lock:
            return [name for name, opened in self._opened.items() if opened.views]

    def _check_folder(self, spec: RepositorySpec) -> None:
        """A local repository's folder still there (a ``failed`` state and
        RepositoryUnavailable when it is gone; ``ready`` again once it is back)."""
        if spec.remote:
            return
        state = self.states[spec.name]
        if spec.path.is_dir():
            if spec.name in self._gone:
                self._gone.discard(spec.name)
                with self._lock:
                    opened = spec.name in self._opened
                state.state, state.error = ("ready" if opened else "pending"), None
            return
        self._gone.add(spec.name)
        state.state, state.error = "failed", f"its folder {spec.path} is gone"
        raise RepositoryUnavailable(
            f"repository {spec.name!r} cannot answer: its folder {spec.path} is gone"
        )

    def check_folders(self) -> None:
        """Bring every local repository's state up to date with its folder (for a listing)."""
        for spec in self.plan.repositories:
            try:
                self._check_folder(spec)
            except RepositoryUnavailable:
                continue

    def _open(self, spec: RepositorySpec) -> Opened:
        state = self.states[spec.name]
        if spec.remote and not spec.path.is_dir():
            if state.state == "failed" and state.error:
                raise RepositoryUnavailable(
                    f"repository {spec.name!r} cannot answer: {state.error}"
                )
            if state.state == "cloning":
                raise RepositoryUnavailable(
                    f"repository {spec.name!r} is being cloned from {spec.shown_url}; ask again"
                    " in a moment"
                )
            raise RepositoryUnavailable(
                f"repository {spec.name!r} is not cloned yet: a server of the service"
                f" (`szrag serve --config`) clones {spec.shown_url} into {spec.path}"
            )
        config = self.configs.get(spec.name)
        if config is None:
            if not spec.path.is_dir():
                state.state, state.error = "failed", f"{spec.path} is not a folder"
                raise RepositoryError(f"repository {spec.name!r}: {spec.path} is not a folder")
            config = self.configs[spec.name] = self._config_of(spec)
        state.state = "indexing"
        try:
            index = self._opener(spec)
        except SzragError as error:
            state.state, state.error = "failed", error.message
            raise
        except OSError as error:
            state.state, state.error = "failed", str(error)
            raise RepositoryError(f"repository {spec.name!r}: {error}") from error
        if index.config != config.repository:  # a store's generation keeps its own
            config = self.configs[spec.name] = self._config_of(spec, index.config)
        index.keep_in_memory()
        host = Host.of(
            config,
            index=index,
            conversations=self.conversations.for_repository(spec.name, config.conversations),
            audit=self.audit.for_repository(spec.name),
        )
        opened = Opened(index, host)
        _note_index(state, index, spec.path)  # before "ready": a reader polling sees both
        state.state, state.error = "ready", None
        return opened

    def note_refreshed(self, name: str) -> None:
        """Bring the state of repository ``name`` up to date with its index and checkout
        after a refresh (its files, when it was indexed, its commit)."""
        with self._lock:
            opened = self._opened.get(name)
        if opened is not None:
            opened.files = opened.index.counts()["files"]
            _note_index(self.states[name], opened.index, self.spec(name).path)

    def note_fetched(self, name: str, at: float) -> None:
        """Record when repository ``name`` was last fetched (epoch seconds); its ``commit``
        follows once the index holds it (``note_refreshed``)."""
        self.states[name].fetched_at = utc_timestamp(at)

    def _config_of(self, spec: RepositorySpec, repository: RepoConfig | None = None) -> Config:
        config = load_config(spec.path, self._environ, repository=repository)
        return self._configure(config) if self._configure else config

    def _touch(self, name: str, opened: Opened) -> None:
        """Mark ``name`` as just asked (under the lock): its views kept, the least recently
        asked others' dropped while the estimate passes the budget."""
        opened.last_asked = time.monotonic()
        self._opened.move_to_end(name)
        if not opened.views:
            opened.index.keep_in_memory()
            opened.views = True
        budget = self.plan.memory_mb
        for other, candidate in list(self._opened.items()):
            if sum(item.cost_mib for item in self._opened.values()) <= budget:
                break
            if other != name and candidate.views:
                candidate.index.drop_views()
                # and read from the store until it is asked again: an unscoped search of
                # every repository must not build again, uncounted, the views dropped
                candidate.index.keep_in_memory(False)
                candidate.views = False
                log.info("dropped the views of %s (memory budget %d MiB)", other, budget)
        for other, state in self.states.items():
            kept = self._opened.get(other)
            state.loaded = bool(kept and kept.views)

    def repository_of(self, conversation_id: str) -> str | None:
        """The repository of the service a kept conversation is about (one lookup in the
        service's store), None when none is kept or its repository left the service."""
        found = self.conversations.repository_of(conversation_id)
        return found if found in self.names() else None

    def repository_of_answer(self, answer_id: str) -> str | None:
        """The repository of the service a kept answer is about (one lookup), else None."""
        found = self.conversations.repository_of_answer(answer_id)
        return found if found in self.names() else None

    # --- questions without a repository --------------------------------------------------

    def route(self, question: str, limit: int = ROUTE_SOURCES) -> Routed:
        """Where an unscoped question goes (opening every repository it has not opened):
        every repository is searched, their files put on one scale and merged
        (``service/merging.py``), and the question goes to the repository of the best file
        of all; ties by the configured order, and when no repository finds anything, the
        one most likely to have produced the question's words. A repository that cannot be
        searched now is left out. Measured on the real-history set (``eval/routing.py``):
        the right repository for 0.698 of the questions, where the likeliest words alone
        chose it for 0.635."""
        clean = require_question(question)
        terms = query_terms(clean)
        searched = [
            found for name in self.names() if (found := self._search(name, clean, terms, limit))
        ]
        if not searched:
            raise RepositoryError("no repository of the service can be searched now")
        merged = tuple(merge(terms, searched, limit))
        likely = likeliest(terms, searched)
        chosen = merged[0].repository if merged else likely[0][0]
        best: dict[str, float] = {}
        for item in merged:
            best.setdefault(item.repository, item.shared_score)
        order = {name: number for number, (name, _) in enumerate(likely)}
        scores = sorted(
            ((item.repository, best.get(item.repository, 0.0)) for item in searched),
            key=lambda pair: (-pair[1], order[pair[0]]),
        )
        sources = next(item.sources for item in searched if item.repository == chosen)
        return Routed(chosen, tuple(scores), sources, merged, likely[0][0])

    def _search(self, name: str, question: str, terms: list[str], limit: int) -> Searched | None:
        """Repository ``name``'s retrieval of an unscoped question and its term counts (its
        index opened, not counted as asked: a search of every repository keeps none of their
        views alive); None, logged, when it cannot be searched now."""
        try:
            index = self._opened_index(name)
            chunks, frequencies = index.term_counts(terms)
            sources = tuple(retrieve(question, limit, index=index))
        except StoreUnavailable:
            raise  # every repository of a replica reads the one database: a 503 says why
        except SzragError as error:  # one broken repository does not stop the others
            log.warning("repository %s left out of an unscoped search: %s", name, error.message)
            return None
        return Searched(name, TermCounts(chunks, frequencies), sources)

    # --- the end -------------------------------------------------------------------------

    def close(self) -> None:
        """Close every open index and conversation store."""
        with self._lock:
            self._closed = True
            opened, self._opened = list(self._opened.values()), OrderedDict()
        for item in opened:
            item.host.conversations.close()
            item.index.close()
        self.conversations.close()


def _note_index(state: RepositoryState, index: IndexStore, root: Path) -> None:
    state.files = index.counts()["files"]
    state.indexed_at = public_timestamp(index.meta().get("generated_at"))
    head = read_git_head(root)
    state.commit = head.commit if head is not None else None


def webhook_secrets(plan: ServicePlan, environ: Mapping[str, str]) -> dict[str, str]:
    """Each repository's webhook secret by name, read from ``environ`` (the variables its
    ``webhook_secret_env`` names); ConfigError for a variable named but not set."""
    return {
        spec.name: _secret_of(spec, environ)
        for spec in plan.repositories
        if spec.webhook_secret_env is not None
    }


def _secret_of(spec: RepositorySpec, environ: Mapping[str, str]) -> str:
    variable = spec.webhook_secret_env or ""
    secret = environ.get(variable, "").strip()
    if not secret:
        raise ConfigError(
            f"repository {spec.name!r}: webhook_secret_env names {variable}, which is not set:"
            " set it to the webhook's secret, or remove the key to turn the webhook off"
        )
    return secret


def _store_opener(url: str) -> Callable[[RepositorySpec], IndexStore]:
    """Opens each repository of a replica from the PostgreSQL store at ``url`` by its name."""

    def open_published(spec: RepositorySpec) -> IndexStore:
        from szrag.index.pg import PostgresIndex  # here: only a replica loads psycopg

        return PostgresIndex(url, spec.name)

    return open_published
