"""The one configuration of a face: the repository file and the environment, read once.

``load_config(root, environ)`` reads the repository's file (``.rag/config.toml`` or
``[tool.szrag]``, :mod:`szrag.base.config`) and hands the environment mapping to the reader of each
part, once, into a frozen :class:`Config`; nothing later reads the mapping again. A face (the
CLI, the server, MCP) builds one and gives it to the host::

    config = load_config(root, os.environ)      # a bad value: ConfigError, naming it
    host = Host.of(config)

Which variable goes to which part, its default and meaning: :mod:`szrag.base.variables` (and
``docs/CONFIGURATION.md``, made from it). The environment wins over the repository file where
both name a setting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from szrag.base.config import RepoConfig, load_repo_config
from szrag.base.settings import ServerSettings, Settings, live_tools_enabled
from szrag.commands.allowlist import Allowlist
from szrag.context.plan import ContextPlan
from szrag.conversations.model import ConversationLimits
from szrag.runtime import log_file_of
from szrag.runtime.sources import RuntimeSources
from szrag.runtime.status import deployment_fields
from szrag.service.audit import audit_path


@dataclass(frozen=True)
class Config:
    """Everything one repository's faces are configured with, each part typed and checked."""

    root: Path
    repository: RepoConfig  # the repository file (profile, ignores, [runtime] ...)
    settings: Settings  # the model provider
    live_tools: bool  # offer the model the live tools
    plan: ContextPlan  # budget, tokenizer and window of the context (a question may rebudget)
    conversations: ConversationLimits
    allowlist: Allowlist  # the commands run without a person typing them
    audit_log: Path | None  # None: no audit log
    log_file: Path | None  # a log file of szrag's own process for getLogs
    deployment: Mapping[str, str]  # getStatus's deployment fields (DEPLOY_ENV ...)
    runtime: RuntimeSources  # the running application's sources ([runtime], SZRAG_RUNTIME_*)
    server: ServerSettings  # exposure, limits, Slack, the watcher

    def replace(self, **changes: object) -> Config:
        """This configuration with some parts given instead (``settings``, ``live_tools`` ...)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def load_config(
    root: Path | str = ".",
    environ: Mapping[str, str] | None = None,
    *,
    repository: RepoConfig | None = None,
) -> Config:
    """The configuration of the repository at ``root`` as its file and ``environ`` describe it
    (no mapping: the defaults, as if no variable were set). ``repository`` is given instead of
    reading the file (an index's own, built under a chosen profile).

    Bad values raise ConfigError here, each naming its variable or key, before anything
    runs."""
    root = Path(root)
    env: Mapping[str, str] = {} if environ is None else environ
    repo = repository if repository is not None else load_repo_config(root.resolve())
    return Config(
        root=root,
        repository=repo,
        settings=Settings.from_env(env),
        live_tools=live_tools_enabled(env, repository=repo.tools),
        plan=ContextPlan.of(repo, env),
        conversations=ConversationLimits.of(repo.conversations, env),
        allowlist=Allowlist.from_env(env),
        audit_log=audit_path(root, env),
        log_file=log_file_of(env),
        deployment=MappingProxyType(deployment_fields(env)),
        runtime=RuntimeSources.of(repo.runtime, env),
        server=ServerSettings.from_env(env),
    )
