"""Every environment variable szrag reads, and every key of the repository file, as data.

Each :class:`Variable` names its default as a user sees it, what it means and the part of the
one :class:`~szrag.service.configuration.Config` that holds it (``PARTS``: the record and the reader
that parses it). ``docs/CONFIGURATION.md`` is generated from these tables
(``python -m szrag.base.variables docs/CONFIGURATION.md`` rewrites the marked tables); the tests
hold the file equal to what is generated, every variable read by ``load_config`` or its face,
every name that appears as a string in ``src/`` listed here, and the test suite clears exactly
these variables.

This module is data alone: it imports nothing of szrag, so the test suite reads it cheaply.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Part:
    """A part of the configuration: the field of ``Config`` that holds it, its reader."""

    key: str
    title: str
    holds: str  # the Config field(s)
    reader: str  # the function that parses it from the environment mapping


@dataclass(frozen=True, slots=True)
class Variable:
    """One environment variable: its name, default (as shown), meaning and part."""

    name: str
    part: str  # a key of PARTS
    default: str  # Markdown, as a user reads it
    meaning: str  # Markdown
    # the Config attribute (dotted) that holds the value: with an empty environment, its
    # value is the one ``default`` shows (held by the tests)
    field: str | None = None


@dataclass(frozen=True, slots=True)
class Key:
    """One key of the repository file (``.rag/config.toml`` or ``[tool.szrag]``)."""

    name: str  # ``profile``, ``runtime.url``, ``runtime.paths.status`` ...
    default: str
    meaning: str
    variable: str | None = None  # the environment variable that wins over it


PARTS = (
    Part("settings", "model provider", "`settings`", "`Settings.from_env` (`base/settings.py`)"),
    Part(
        "live_tools",
        "live tools",
        "`live_tools`",
        "`live_tools_enabled` (`base/settings.py`)",
    ),
    Part("plan", "context", "`plan`", "`ContextPlan.of` (`context/plan.py`)"),
    Part(
        "conversations",
        "conversations",
        "`conversations`",
        "`ConversationLimits.of` (`conversations/model.py`)",
    ),
    Part("allowlist", "commands", "`allowlist`", "`Allowlist.from_env` (`commands/allowlist.py`)"),
    Part("audit", "audit log", "`audit_log`", "`audit_path` (`service/audit.py`)"),
    Part(
        "process",
        "szrag's process",
        "`log_file`, `deployment`",
        "`log_file_of`, `deployment_fields` (`runtime/`)",
    ),
    Part(
        "runtime",
        "the running application",
        "`runtime`",
        "`RuntimeSources.of` (`runtime/sources.py`)",
    ),
    Part(
        "server", "server and Slack", "`server`", "`ServerSettings.from_env` (`base/settings.py`)"
    ),
    Part("cli", "command line", "(none)", "the console, `cli/common.py` (Rich reads it too)"),
)
PARTS_BY_KEY = {part.key: part for part in PARTS}

VARIABLES = (
    # the model provider
    Variable(
        "AI_URL",
        "settings",
        "`https://ai.hackclub.com/proxy/v1`",
        "the OpenAI-compatible base URL, or the full `.../chat/completions` endpoint"
        " (`/chat/completions` is appended otherwise)",
        "settings.ai_url",
    ),
    Variable(
        "AI_MODEL",
        "settings",
        "`openai/gpt-6-luna`",
        "the model named in each request (`gpt-4o-mini` when the key is from"
        " `OPENAI_API_KEY` and no URL is set)",
        "settings.ai_model",
    ),
    Variable(
        "AI_API_KEY",
        "settings",
        "unset",
        "the provider's bearer key; unset: no model calls, answers from retrieval alone",
    ),
    Variable(
        "OPENAI_API_KEY",
        "settings",
        "unset",
        "stands in for `AI_API_KEY` when that is unset; with no URL set its key goes to"
        " `https://api.openai.com/v1` (model `gpt-4o-mini`), never to the default proxy",
    ),
    Variable("OPENAI_BASE_URL", "settings", "unset", "stands in for `AI_URL` when that is unset"),
    Variable(
        "SZRAG_AI_CONNECT_TIMEOUT",
        "settings",
        "10",
        "seconds to open a connection to the provider",
        "settings.connect_timeout",
    ),
    Variable(
        "SZRAG_AI_READ_TIMEOUT",
        "settings",
        "120",
        "seconds of silence tolerated while reading a reply",
        "settings.read_timeout",
    ),
    Variable(
        "SZRAG_AI_RETRIES",
        "settings",
        "2",
        "extra attempts after a 429 or 5xx answer (an error body saying the request is invalid"
        " is not retried)",
        "settings.retries",
    ),
    Variable(
        "SZRAG_AI_RETRY_DELAY",
        "settings",
        "1",
        "the first backoff delay in seconds, doubled each attempt",
        "settings.retry_delay",
    ),
    Variable(
        "SZRAG_AI_RETRY_MAX_DELAY",
        "settings",
        "10",
        "the longest single wait in seconds, a `Retry-After` included",
        "settings.retry_max_delay",
    ),
    Variable(
        "SZRAG_AI_TOTAL_TIMEOUT",
        "settings",
        "300",
        "seconds one reply may take from first byte to last; past it the answer so far is kept"
        " and marked as cut",
        "settings.total_timeout",
    ),
    Variable(
        "SZRAG_AI_MAX_REPLY_CHARS",
        "settings",
        "200000",
        "the longest answer accepted, in characters; past it the answer so far is kept and"
        " marked as cut",
        "settings.max_reply_chars",
    ),
    Variable(
        "SZRAG_AI_MAX_TOKENS",
        "settings",
        "unset (not sent)",
        "`max_tokens` sent with each request; an answer stopped at the limit says so",
    ),
    # the live tools
    Variable(
        "SZRAG_TOOLS",
        "live_tools",
        "the repository's `tools`, else on",
        "`0` stops offering the model the live tools (server, Slack, MCP and `szrag ask`);"
        " `--tools/--no-tools` wins over it",
        "live_tools",
    ),
    # the context
    Variable(
        "SZRAG_CONTEXT_BUDGET",
        "plan",
        "the repository's `context_budget`, else 12000 (4000 in the `slackzilla` profile)",
        "tokens of repository context given to the model; `--budget` and a request's `budget`"
        " win over it",
        "plan.budget",
    ),
    Variable(
        "SZRAG_CONTEXT_WINDOW",
        "plan",
        "the repository's `context_window`, else unknown",
        "the model's context window: the system prompt, the question, the tool definitions and"
        " the answer's reserve are counted and the context shrinks so the request fits",
    ),
    Variable(
        "SZRAG_ANSWER_TOKENS",
        "plan",
        "1024",
        "the tokens kept for the model's answer when its window is known",
        "plan.answer_tokens",
    ),
    Variable(
        "SZRAG_TOKENIZER",
        "plan",
        "`cl100k_base` (`estimate` in the `slackzilla` profile)",
        "how tokens are counted: `estimate` (one token per four characters), `cl100k_base` or"
        " `o200k_base` (exact; the estimate, with a note, when the encoding cannot be loaded)",
        "plan.tokenizer",
    ),
    # conversations
    Variable(
        "SZRAG_CONVERSATION_TURNS",
        "conversations",
        "the repository's `turns`, else 10",
        "the last turns a conversation keeps",
        "conversations.turns",
    ),
    Variable(
        "SZRAG_CONVERSATION_MAX_AGE_HOURS",
        "conversations",
        "the repository's `max_age_hours`, else 168",
        "hours a turn is kept",
        "conversations.max_age_hours",
    ),
    Variable(
        "SZRAG_CONVERSATION_TOKENS",
        "conversations",
        "the repository's `tokens`, else 4000",
        "tokens of earlier turns given to the model (a quarter of a known context window at"
        " most), the oldest dropped first",
        "conversations.tokens",
    ),
    # commands
    Variable(
        "SZRAG_COMMAND_ALLOWLIST",
        "allowlist",
        "the built-ins without side effects",
        "comma-separated command ids that inference, the tools and the server may run; `*` for"
        " every command, an empty value for none",
    ),
    # the audit log
    Variable(
        "SZRAG_AUDIT_LOG",
        "audit",
        "`<root>/.rag/audit.log`",
        "the audit log's file (a service of several repositories: its one log, default"
        " `audit.log` in its data folder; beside a PostgreSQL conversation store, its table),"
        " or `off` (also `none`, `false`, `0`, `-`) for none",
    ),
    # szrag's own process
    Variable(
        "SZRAG_LOG_FILE",
        "process",
        "unset",
        "a log file of szrag's own process whose last lines `getLogs` also shows",
    ),
    Variable(
        "DEPLOY_ENV",
        "process",
        "unset",
        "the deployment's `target`, reported by `getStatus` and `getReleaseInfo`",
    ),
    Variable(
        "GIT_SHA",
        "process",
        "unset",
        "the deployment's `gitSha`, reported by `getStatus` and `getReleaseInfo` (the running"
        " commit when the application's status names none)",
    ),
    Variable(
        "RELEASE",
        "process",
        "unset",
        "the deployment's `release`, reported by `getStatus` and `getReleaseInfo`",
    ),
    # the running application
    Variable(
        "SZRAG_RUNTIME_URL",
        "runtime",
        "the repository's `[runtime] url`",
        "the running application's base URL (`/api/status`, `/api/logs` ...); loopback and"
        " private addresses only, unless `allow_public`",
    ),
    Variable(
        "SZRAG_RUNTIME_TOKEN",
        "runtime",
        "the variable `[runtime] token_env` names",
        "the bearer token for the application's URL",
    ),
    Variable(
        "SZRAG_LOG_FILES",
        "runtime",
        "the repository's `[runtime] log_files`",
        "the application's log files, comma-separated globs (their rotations are read too)",
    ),
    Variable(
        "SZRAG_METRICS_URL",
        "runtime",
        "the repository's `[runtime] metrics_url`",
        "the application's Prometheus exposition, for `getMetrics`",
    ),
    Variable(
        "SZRAG_JOURNAL_UNIT",
        "runtime",
        "the repository's `[runtime] journal_unit`",
        "a systemd unit whose journal holds the application's logs",
    ),
    # the server
    Variable(
        "SZRAG_API_TOKENS",
        "server",
        "unset (an open API, on loopback only)",
        "comma-separated bearer tokens the API and MCP over HTTP accept",
    ),
    Variable(
        "SZRAG_ADMIN_TOKEN",
        "server",
        "unset (admin routes refused)",
        "the bearer token for `/api/admin/*` and the admin tools over HTTP",
    ),
    Variable(
        "SZRAG_CORS_ORIGINS",
        "server",
        "unset (no CORS headers)",
        "comma-separated browser origins allowed to call the API",
    ),
    Variable(
        "SZRAG_ALLOWED_HOSTS",
        "server",
        "unset",
        "comma-separated host names (no port) an open server also answers to, besides loopback"
        " and its bound address (against DNS rebinding)",
    ),
    Variable(
        "SZRAG_RATE_LIMIT",
        "server",
        "30",
        "questions per minute per identity; `0` turns the limit off",
        "server.ask_rate.per_minute",
    ),
    Variable(
        "SZRAG_RATE_BURST",
        "server",
        "10",
        "questions an identity may ask at once before the rate applies (other reads: at least 60)",
        "server.ask_rate.burst",
    ),
    Variable(
        "SZRAG_READ_RATE_LIMIT",
        "server",
        "300",
        "other API reads per minute per identity; `0` turns the limit off",
        "server.read_rate.per_minute",
    ),
    Variable(
        "SZRAG_REPO_URL",
        "server",
        "unset",
        "the repository browser's base (`https://github.com/o/r/blob/main`) for source links on"
        " the page and in Slack",
    ),
    Variable(
        "SZRAG_WATCH",
        "server",
        "on",
        "`0` turns the server's file watcher off",
    ),
    Variable(
        "SZRAG_WATCH_DEBOUNCE_MS",
        "server",
        "400",
        "milliseconds changes are gathered before the index is refreshed",
        "server.watch_debounce_ms",
    ),
    Variable(
        "SZRAG_MEMORY_MB",
        "server",
        "the service file's `memory_mb`, else 1024",
        "megabytes of in-memory views a server over several repositories keeps; past it the"
        " views of the repository asked least recently are dropped (its index stays open)",
    ),
    # Slack
    Variable(
        "SLACK_SIGNING_SECRET",
        "server",
        "unset",
        "verifies Slack's requests; set, Slack is served over HTTP at `/slack/events`",
    ),
    Variable(
        "SLACK_BOT_TOKEN",
        "server",
        "unset",
        "lets szrag post, answer in threads and take feedback",
    ),
    Variable(
        "SLACK_APP_TOKEN",
        "server",
        "unset",
        "Slack in Socket Mode, without a public request URL",
    ),
    Variable(
        "SZRAG_SLACK_API_URL",
        "server",
        "`https://slack.com/api/`",
        "the base URL of Slack's Web API, for a proxy or an Enterprise Grid gateway",
        "server.slack_api_url",
    ),
    Variable(
        "SZRAG_SLACK_THREAD_REPLIES",
        "server",
        "`all`",
        "which replies in a thread the bot started are answered: `all`, or only those that"
        " mention it (`mentions`)",
        "server.slack_thread_replies",
    ),
    # the command line
    Variable(
        "SZRAG_STORE",
        "cli",
        "unset",
        "the PostgreSQL store (`postgresql://user@host/database`) of `--store`: `szrag index`"
        " publishes to it, `szrag serve`, `retrieve` and `ask` read from it with no checkout",
    ),
    Variable(
        "FORCE_COLOR",
        "cli",
        "unset",
        "set, the command line draws with Rich and colours even when it writes to a pipe or a file",
    ),
)
VARIABLES_BY_NAME = {variable.name: variable for variable in VARIABLES}
NAMES = tuple(variable.name for variable in VARIABLES)
# the variables a Config holds (the rest are read by their face alone)
CONFIG_NAMES = tuple(variable.name for variable in VARIABLES if variable.part != "cli")

KEYS = (
    Key("profile", "`default`", "`default` or `slackzilla` (the original's rules exactly)"),
    Key(
        "ranker",
        "the profile's (`bm25`; `spec` in `slackzilla`)",
        "`bm25` or `spec` (the `slackzilla` profile keeps `spec`)",
    ),
    Key("extra_extensions", "`[]`", 'more extensions to index as text (`[".sql"]`)'),
    Key(
        "extra_ignores",
        "`[]`",
        "gitignore patterns left out, on top of `.gitignore` and `.ragignore`",
    ),
    Key("max_file_bytes", "1048576", "files above this size are skipped and reported"),
    Key(
        "index_generated",
        "`false`",
        "`true`: index code whose first lines say a tool wrote it (`DO NOT EDIT`, `@generated`)",
    ),
    Key(
        "context_budget",
        "12000 (4000 in `slackzilla`)",
        "tokens of repository context given to the model",
        "SZRAG_CONTEXT_BUDGET",
    ),
    Key(
        "context_window",
        "unknown",
        "the model's context window: the whole request is kept inside it",
        "SZRAG_CONTEXT_WINDOW",
    ),
    Key("tools", "`true`", "`false`: never offer the model the live tools", "SZRAG_TOOLS"),
    Key(
        "conversations.turns",
        "10",
        "the last turns kept per conversation",
        "SZRAG_CONVERSATION_TURNS",
    ),
    Key(
        "conversations.max_age_hours",
        "168",
        "turns older than this are forgotten",
        "SZRAG_CONVERSATION_MAX_AGE_HOURS",
    ),
    Key(
        "conversations.tokens",
        "4000",
        "at most this many tokens of earlier turns go to the model",
        "SZRAG_CONVERSATION_TOKENS",
    ),
    Key(
        "runtime.url",
        "unset",
        "the running application's base URL (its `/api/status`, `/api/logs` ...)",
        "SZRAG_RUNTIME_URL",
    ),
    Key(
        "runtime.token_env",
        "unset",
        "the environment variable that holds the application's bearer token (a token is only"
        " ever read from the environment)",
        "SZRAG_RUNTIME_TOKEN",
    ),
    Key(
        "runtime.log_files",
        "`[]`",
        "globs of the application's log files, relative to the repository or absolute",
        "SZRAG_LOG_FILES",
    ),
    Key(
        "runtime.metrics_url",
        "unset",
        "a Prometheus exposition (`/metrics` text format)",
        "SZRAG_METRICS_URL",
    ),
    Key(
        "runtime.journal_unit",
        "unset",
        "a systemd unit whose journal holds the logs",
        "SZRAG_JOURNAL_UNIT",
    ),
    Key(
        "runtime.commit_file",
        "unset",
        "a file the deployment writes the running commit into",
    ),
    Key(
        "runtime.allow_public",
        "`false`",
        "`true`: the URL may be outside loopback and private networks",
    ),
    Key(
        "runtime.paths",
        "`/api/status`, `/api/logs`, `/api/admin/errors`, `/api/metrics`, `/api/release`",
        "a table of the HTTP path of each read (`status`, `logs`, `errors`, `metrics`,"
        " `release`): another path, or `false` to leave that read to the next source",
    ),
)


# ---- docs/CONFIGURATION.md ---------------------------------------------------------------

MARKERS = {
    "variables": (
        "<!-- variables: generated by python -m szrag.base.variables -->",
        "<!-- /variables -->",
    ),
    "parts": ("<!-- parts: generated by python -m szrag.base.variables -->", "<!-- /parts -->"),
    "keys": ("<!-- keys: generated by python -m szrag.base.variables -->", "<!-- /keys -->"),
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def variables_table() -> str:
    """The Markdown table of every variable: name, default, meaning, part."""
    lines = ["| variable | default | meaning | part |", "|---|---|---|---|"]
    for variable in VARIABLES:
        lines.append(
            f"| `{variable.name}` | {_cell(variable.default)} | {_cell(variable.meaning)} "
            f"| {variable.part} |"
        )
    return "\n".join(lines)


def parts_table() -> str:
    """The Markdown table of the parts: what each is, the Config field, the reader."""
    lines = ["| part | what | `Config` field | read by |", "|---|---|---|---|"]
    for part in PARTS:
        lines.append(f"| {part.key} | {part.title} | {part.holds} | {part.reader} |")
    return "\n".join(lines)


def keys_table() -> str:
    """The Markdown table of the repository file's keys."""
    lines = ["| key | default | meaning | the variable that wins |", "|---|---|---|---|"]
    for key in KEYS:
        winner = f"`{key.variable}`" if key.variable else ""
        lines.append(f"| `{key.name}` | {_cell(key.default)} | {_cell(key.meaning)} | {winner} |")
    return "\n".join(lines)


TABLES = {"variables": variables_table, "parts": parts_table, "keys": keys_table}


def rendered(document: str) -> str:
    """``document`` with each marked table replaced by the one these tables make."""
    for name, (start, end) in MARKERS.items():
        pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.DOTALL)
        found = pattern.search(document)
        if found is None:
            raise ValueError(f"the document has no {name} table between {start} and {end}")
        block = f"{start}\n{TABLES[name]()}\n{end}"
        document = document[: found.start()] + block + document[found.end() :]
    return document


def main(arguments: list[str]) -> int:
    """``python -m szrag.base.variables FILE``: rewrite the marked tables of FILE in place;
    ``--check FILE``: exit 1 when FILE's tables are not the generated ones."""
    check = arguments[:1] == ["--check"]
    paths = arguments[1:] if check else arguments
    if len(paths) != 1:
        print(
            "usage: python -m szrag.base.variables [--check] docs/CONFIGURATION.md", file=sys.stderr
        )
        return 2
    path = Path(paths[0])
    document = path.read_text(encoding="utf-8")
    wanted = rendered(document)
    if check:
        if wanted != document:
            print(f"{path} differs from the tables szrag.base.variables makes", file=sys.stderr)
            return 1
        return 0
    if wanted != document:
        path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
