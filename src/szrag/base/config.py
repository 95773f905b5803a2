"""Profiles and per-repository configuration.

A profile fixes which files belong to the index and which ranking rules apply:

* ``slackzilla``: the original service's rules exactly, for parity.
* ``default``: the same plus the source of every common language (by extension and by
  well-known names such as ``Dockerfile``) and text formats, ``.gitignore`` and
  ``.ragignore`` honoured, lock files, vendored folders and generated bundles left out, the
  ``bm25`` ranker, and an evidence-first context of 12,000 tokens counted with cl100k_base.

The indexed repository configures szrag in one place: ``.rag/config.toml`` (top-level keys) or,
when that file is absent, the ``[tool.szrag]`` table of its ``pyproject.toml``::

    profile = "default"            # or "slackzilla"
    extra_extensions = [".sql"]    # indexed as text
    extra_ignores = ["fixtures/large/", "*.snap"]   # gitignore syntax
    max_file_bytes = 1048576       # files above this are skipped and reported
    index_generated = true         # index code whose first lines say a tool wrote it
    ranker = "spec"
    context_budget = 12000         # tokens of repository context given to the model
    context_window = 32768         # the model's window: the whole request is kept inside it
    tools = false                  # never offer the model the live tools (SZRAG_TOOLS wins)

    [conversations]                # what a conversation remembers (SZRAG_CONVERSATION_* win)
    turns = 10                     # the last turns kept per conversation
    max_age_hours = 168            # turns older than this are forgotten
    tokens = 4000                  # at most this many tokens of earlier turns go to the model
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from szrag.base.errors import ConfigError

SPEC_EXTENSIONS = frozenset(
    {
        ".js",
        ".jsx",
        ".mjs",
        ".json",
        ".md",
        ".css",
        ".html",
        ".yml",
        ".service",
        ".conf",
        ".example",
    }
)
SPEC_IGNORED_DIRECTORIES = frozenset(
    {".git", ".rag", "node_modules", "dist", "logs", "archive", ".vscode", "priv", "prompts"}
)
SPEC_IGNORED_FILES = frozenset({"package-lock.json", "feedback.json", "metrics.json"})
IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})

# Source of every common language, recognised by extension; structure is parsed where a
# grammar is installed (szrag.code.languages), the rest is indexed and ranked as text.
SOURCE_EXTENSIONS = frozenset(
    {".py", ".pyi", ".ts", ".tsx", ".cjs", ".mts", ".cts", ".vue", ".svelte", ".astro"}
    | {".go", ".rs", ".java", ".kt", ".kts", ".scala", ".sc", ".groovy", ".gradle"}
    | {".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".m", ".mm", ".cs", ".fs"}
    | {".rb", ".rake", ".gemspec", ".php", ".swift", ".ex", ".exs", ".erl", ".hrl"}
    | {".lua", ".dart", ".zig", ".nim", ".jl", ".r", ".pl", ".pm", ".clj", ".cljs", ".hs"}
    | {".ml", ".mli", ".elm", ".sh", ".bash", ".zsh", ".fish", ".ps1", ".sql"}
    | {".graphql", ".gql", ".proto", ".thrift", ".tf", ".tfvars", ".hcl", ".nix"}
    | {".scss", ".sass", ".less", ".hbs", ".ejs", ".pug", ".njk", ".jinja", ".j2", ".erb"}
    | {".y", ".yy", ".l", ".g4"}  # grammars: what a generated parser was made from
)
DEFAULT_EXTRA_EXTENSIONS = SOURCE_EXTENSIONS | frozenset(
    {".yaml", ".toml", ".txt", ".rst", ".ini", ".cfg", ".xml", ".properties", ".mdx", ".adoc"}
)
# Files indexed by their whole name, whatever their extension (or lack of one).
DEFAULT_FILE_NAMES = frozenset(
    {"Dockerfile", "Containerfile", "Makefile", "GNUmakefile", "Justfile", "Rakefile"}
    | {"Gemfile", "Procfile", "Jenkinsfile", "Vagrantfile", "Brewfile", "Caddyfile", "BUILD"}
    | {"WORKSPACE", "CMakeLists.txt", "go.mod", "Cargo.toml", ".gitlab-ci.yml"}
)
DEFAULT_EXTRA_DIRECTORIES = frozenset(
    {
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".idea",
        "build",
        "coverage",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".cache",
        "vendor",
        "third_party",
        "target",
        ".gradle",
        ".terraform",
        "bower_components",
    }
)
DEFAULT_EXTRA_FILES = frozenset(
    {"yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock", "Pipfile.lock", "Cargo.lock"}
    | {"go.sum", "composer.lock", "Gemfile.lock", "mix.lock", "flake.lock", "Package.resolved"}
    | {"packages.lock.json", "npm-shrinkwrap.json", "gradle.lockfile"}
)
# Generated or bundled files: minified bundles, source maps, protobuf and other codegen.
DEFAULT_GENERATED_SUFFIXES = (
    ".min.js", ".min.mjs", ".min.css", ".bundle.js", ".chunk.js", ".pb.go", ".pb.cc", ".pb.h",
    "_pb2.py", "_pb2.pyi", "_pb2_grpc.py", ".pb.swift", ".g.dart", ".freezed.dart",
    ".generated.ts", ".generated.js", ".designer.cs",
)  # fmt: skip

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
PROFILES = ("default", "slackzilla")
RANKER_NAMES = ("spec", "bm25")  # the rankers szrag.rank registers


@dataclass(frozen=True)
class Profile:
    """Collection and ranking rules for one kind of repository."""

    name: str
    extensions: frozenset[str]
    ignored_directories: frozenset[str]
    ignored_files: frozenset[str]
    image_extensions: frozenset[str] = IMAGE_EXTENSIONS
    honour_ignore_files: bool = False
    # The original adds topic and type bonuses to every chunk, matched or not.
    bonuses_need_match: bool = True
    ranker: str = "spec"  # "slackzilla" keeps it whatever the configuration says
    file_names: frozenset[str] = frozenset()  # indexed by name, e.g. Dockerfile
    generated_suffixes: tuple[str, ...] = ()  # left out as generated or bundled
    skips_generated: bool = False  # code whose first lines say a tool wrote it is left out
    # the repository context a model receives: tokens, how they are counted, what goes first
    detect_virtualenvs: bool = False  # folders holding pyvenv.cfg are left out, whatever their name
    context_budget: int = 4000
    tokenizer: str = "estimate"
    packing: str = "spec"
    fill: bool = False  # rankers fill the requested number of files (the original cuts at 85%)
    units: bool = False  # a chosen file answers with its best units, not the ranker's window
    code_tools: bool = False  # the model may read the index (tools/code.py) beside the live tools


SLACKZILLA = Profile(
    name="slackzilla",
    extensions=SPEC_EXTENSIONS,
    ignored_directories=SPEC_IGNORED_DIRECTORIES,
    ignored_files=SPEC_IGNORED_FILES,
    honour_ignore_files=False,
    bonuses_need_match=False,
)

DEFAULT = Profile(
    name="default",
    extensions=SPEC_EXTENSIONS | DEFAULT_EXTRA_EXTENSIONS,
    ignored_directories=SPEC_IGNORED_DIRECTORIES | DEFAULT_EXTRA_DIRECTORIES,
    ignored_files=SPEC_IGNORED_FILES | DEFAULT_EXTRA_FILES,
    honour_ignore_files=True,
    bonuses_need_match=True,
    # measured against "spec" and a whole-file baseline on real history (eval/README.md)
    ranker="bm25",
    image_extensions=IMAGE_EXTENSIONS | {".svg"},
    file_names=DEFAULT_FILE_NAMES,
    generated_suffixes=DEFAULT_GENERATED_SUFFIXES,
    skips_generated=True,
    detect_virtualenvs=True,
    context_budget=12000,  # current models read far more than the original's 4,000
    tokenizer="cl100k_base",
    packing="evidence",
    fill=True,
    units=True,
    code_tools=True,
)


def profile_named(name: str) -> Profile:
    """The built-in profile called ``name``."""
    if name == "slackzilla":
        return SLACKZILLA
    if name == "default":
        return DEFAULT
    raise ConfigError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")


@dataclass(frozen=True)
class RepoConfig:
    """What one indexed repository asks of szrag."""

    profile: Profile = DEFAULT
    extra_ignores: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    source: str | None = None  # where it was read from, for messages
    context_budget: int | None = None  # tokens of repository context (the profile's default)
    context_window: int | None = None  # the model's whole context window, when known
    tools: bool | None = None  # offer the model the live tools (None: the default, on)
    runtime: RuntimeConfig = field(default_factory=lambda: RuntimeConfig())
    conversations: ConversationConfig = field(default_factory=lambda: ConversationConfig())

    @property
    def extensions(self) -> frozenset[str]:
        """Text extensions that are indexed."""
        return self.profile.extensions

    def fingerprint(self) -> str:
        """A stable string that changes whenever collection rules change."""
        parts = [
            self.profile.name,
            ",".join(sorted(self.profile.extensions)),
            ",".join(sorted(self.profile.ignored_directories)),
            ",".join(sorted(self.profile.ignored_files)),
            ",".join(sorted(self.profile.file_names)),
            ",".join(self.profile.generated_suffixes),
            str(self.profile.skips_generated),
            ",".join(sorted(self.profile.image_extensions)),
            str(self.profile.detect_virtualenvs),
            "|".join(self.extra_ignores),
            str(self.max_file_bytes),
        ]
        return ";".join(parts)


@dataclass(frozen=True)
class RuntimeConfig:
    """Where the running application's live evidence comes from (``[runtime]``); tokens come
    from the environment only, by the variable ``token_env`` names."""

    url: str | None = None  # the application's base URL (its /api/status, /api/logs ...)
    token_env: str | None = None  # the environment variable that holds its bearer token
    log_files: tuple[str, ...] = ()  # globs, relative to the repository or absolute
    metrics_url: str | None = None  # a Prometheus exposition (``/metrics`` text format)
    journal_unit: str | None = None  # a systemd unit whose journal holds the logs
    commit_file: str | None = None  # a file the deployment writes the running commit into
    # the HTTP source's path per read (status, logs, errors, metrics, release): another
    # path, or None to leave that read to the next source
    paths: tuple[tuple[str, str | None], ...] = ()
    allow_public: bool = False  # a URL outside loopback and private networks


@dataclass(frozen=True)
class ConversationConfig:
    """What the repository asks of conversation memory (``[conversations]``); None: the
    default (see :mod:`szrag.conversations`)."""

    turns: int | None = None
    max_age_hours: float | None = None
    tokens: int | None = None


def _conversations(raw: dict[str, Any], where: str) -> ConversationConfig:
    table = raw.get("conversations", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [conversations] must be a table")
    unknown = set(table) - {"turns", "max_age_hours", "tokens"}
    if unknown:
        raise ConfigError(f"{where}: unknown [conversations] keys {', '.join(sorted(unknown))}")
    hours = table.get("max_age_hours")
    if hours is not None and (
        not isinstance(hours, int | float) or isinstance(hours, bool) or not 0 < hours < 1e6
    ):
        raise ConfigError(f"{where}: conversations.max_age_hours must be a positive number")
    inner = f"{where} [conversations]"
    return ConversationConfig(
        turns=_optional_count(table, "turns", inner, unit="turns"),
        max_age_hours=float(hours) if hours is not None else None,
        tokens=_optional_count(table, "tokens", inner),
    )


_RUNTIME_KEYS = {
    "url",
    "token_env",
    "log_files",
    "allow_public",
    "metrics_url",
    "journal_unit",
    "paths",
    "commit_file",
}
RUNTIME_READS = ("status", "logs", "errors", "metrics", "release")


def _runtime(raw: dict[str, Any], where: str) -> RuntimeConfig:
    table = raw.get("runtime", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [runtime] must be a table")
    unknown = set(table) - _RUNTIME_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown [runtime] keys {', '.join(sorted(unknown))}")
    for key in ("url", "token_env", "metrics_url", "journal_unit", "commit_file"):
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"{where}: runtime.{key} must be a string")
    paths = table.get("paths", {})
    if not isinstance(paths, dict) or set(paths) - set(RUNTIME_READS):
        raise ConfigError(
            f"{where}: [runtime.paths] takes {', '.join(RUNTIME_READS)}, each a path or false"
        )
    for key, value in paths.items():
        if value is not False and not (isinstance(value, str) and value.startswith("/")):
            raise ConfigError(f"{where}: runtime.paths.{key} must be a path (/...) or false")
    return RuntimeConfig(
        paths=tuple((key, value or None) for key, value in sorted(paths.items())),
        url=table.get("url") or None,
        token_env=table.get("token_env") or None,
        log_files=_string_list(table, "log_files", f"{where} [runtime]"),
        metrics_url=table.get("metrics_url") or None,
        journal_unit=table.get("journal_unit") or None,
        commit_file=table.get("commit_file") or None,
        allow_public=bool(_optional_flag(table, "allow_public", f"{where} [runtime]")),
    )


_KNOWN_KEYS = {
    "runtime",
    "conversations",
    "profile",
    "extra_extensions",
    "extra_ignores",
    "max_file_bytes",
    "index_generated",
    "ranker",
    "context_budget",
    "context_window",
    "tools",
}


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # here: most repositories have no configuration file to read

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read: {error.strerror}") from error


def _raw_config(root: Path) -> tuple[dict[str, Any], str | None]:
    own = root / ".rag" / "config.toml"
    if own.is_file():
        return _read_toml(own), str(own)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("szrag")
        if isinstance(table, dict):
            return table, f"{pyproject} [tool.szrag]"
    return {}, None


def _string_list(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def load_repo_config(root: Path, *, profile: str | None = None) -> RepoConfig:
    """Read the repository's configuration; ``profile`` (e.g. from the CLI) wins over the file."""
    raw, source = _raw_config(root)
    where = source or "configuration"
    unknown = set(raw) - _KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    chosen = profile_named(profile or str(raw.get("profile", "default")))
    extensions = _string_list(raw, "extra_extensions", where)
    bad = [ext for ext in extensions if not ext.startswith(".")]
    if bad:
        raise ConfigError(f"{where}: extra_extensions must start with a dot: {', '.join(bad)}")
    if extensions:
        chosen = replace(chosen, extensions=chosen.extensions | {ext.lower() for ext in extensions})
    ranker = raw.get("ranker")
    if ranker is not None:
        if ranker not in RANKER_NAMES:
            raise ConfigError(f"{where}: unknown ranker {ranker!r}")
        if chosen.name != "slackzilla":
            chosen = replace(chosen, ranker=str(ranker))
    if _optional_flag(raw, "index_generated", where):
        chosen = replace(chosen, skips_generated=False)
    max_bytes = raw.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
    if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes <= 0:
        raise ConfigError(f"{where}: max_file_bytes must be a positive integer")
    return RepoConfig(
        profile=chosen,
        extra_ignores=_string_list(raw, "extra_ignores", where),
        max_file_bytes=max_bytes,
        source=source,
        context_budget=_optional_count(raw, "context_budget", where),
        context_window=_optional_count(raw, "context_window", where),
        tools=_optional_flag(raw, "tools", where),
        runtime=_runtime(raw, where),
        conversations=_conversations(raw, where),
    )


def _optional_flag(raw: dict[str, Any], key: str, where: str) -> bool | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be true or false")
    return value


def _optional_count(
    raw: dict[str, Any], key: str, where: str, *, unit: str = "tokens"
) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{where}: {key} must be a positive whole number of {unit}")
    return value
