"""``szrag serve``: the HTTP API, the web page and the Slack endpoint for one repository, or
for several (``--repo NAME=PATH``, ``--config szrag.toml``: repositories from a URL are cloned
once the server runs, while the others answer), or, as a replica, for the repositories
published to a PostgreSQL store (``--store URL [--repo NAME]``: no checkout)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import click

from szrag.base.errors import ConfigError
from szrag.cli.common import (
    REPLICA_DATA,
    config_for,
    console,
    handle_errors,
    replica,
    report_shown,
    root_option,
    show_report,
    store_option,
)

if TYPE_CHECKING:
    from szrag.base.settings import Settings
    from szrag.service.repositories import ServicePlan

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787


def register(group: click.Group) -> None:
    """Add ``serve`` to ``group``."""
    group.add_command(serve)


@click.command()
@root_option
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="NAME=PATH|URL",
    help="Serve this repository under NAME (repeatable): a folder, or a git URL (URL#BRANCH)"
    " cloned into .szrag/repositories and fetched; questions name one or are routed.",
)
@store_option(
    "Serve as a replica from this PostgreSQL store (default SZRAG_STORE), no checkout: --repo"
    " NAME picks published repositories (default: all of them)."
)
@click.option(
    "--data",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(REPLICA_DATA),
    show_default=True,
    help="With --store: the replica's own folder (each repository's conversations, audit log).",
)
@click.option(
    "--config",
    "service_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A service file (szrag.toml) listing the repositories to serve.",
)
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    help="Server log verbosity.",
)
@handle_errors
def serve(
    root: Path,
    repos: tuple[str, ...],
    store: str | None,
    data: Path,
    service_file: Path | None,
    host: str,
    port: int,
    log_level: str,
) -> None:
    """Serve the page, the API (POST /api/ask, with server-sent events) and Slack /sz-ask.

    An address other than loopback needs SZRAG_API_TOKENS. Slack is enabled by
    SLACK_SIGNING_SECRET (HTTP, request URL /slack/events) or SLACK_APP_TOKEN (Socket Mode).
    """
    import uvicorn

    from szrag.index import load_index
    from szrag.server import create_app
    from szrag.server.auth import check_exposure
    from szrag.service.service import webhook_secrets

    plan = (
        replica(store, repos, service_file, data)
        if store is not None
        else service_plan(repos, service_file)
    )
    if plan is not None:
        webhook_secrets(plan, os.environ)  # a secret named but not set: before any clone
    if plan is not None and plan.first_present() is None:
        clone_first(plan)  # the page and the runtime reads need one repository at start
    if plan is not None:
        root = plan.configured_root()
    if not root.is_dir():
        raise ConfigError(f"{root} is not a directory")
    config = config_for(root.resolve())  # the file and the environment, read once
    settings = config.server
    check_exposure(host, settings)
    app = create_app(config=config, plan=plan, environ=os.environ)
    if store is None:  # a replica's store is built and refreshed by its indexer
        with console.status("Preparing the index..."), report_shown(), load_index(root) as index:
            report = index.last_report  # built or refreshed now: a failure is a message
        show_report(report)
    check_port_free(host, port)
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    if store is not None and plan is not None:
        from szrag.index.pg.schema import shown_url

        names = ", ".join(spec.name for spec in plan.repositories)
        served = f"{names} from {shown_url(store)} (a replica: no checkout, no watcher)"
    elif plan is not None:
        served = ", ".join(
            f"{spec.name} ({spec.shown_url or spec.path})" for spec in plan.repositories
        )
    else:
        served = str(root.resolve())
    lines = [
        f"szrag serving {served}",
        f"  page:   {base}/",
        f"  API:    POST {base}/api/ask  (GET {base}/api/status, /api/commands, ...)",
        f"  model:  {model_line(app.state.answer_settings)}",
    ]
    if plan is not None and any(spec.remote for spec in plan.repositories):
        every = f"every {plan.fetch_interval:g} s" if plan.fetch_interval else "on webhooks only"
        lines.append(f"  clones: {plan.data}, fetched {every}")
        for spec in plan.repositories:
            if spec.webhook_secret_env:
                lines.append(f"  webhook: POST {base}/api/repositories/{spec.name}/webhook")
    if settings.slack_signing_secret:
        lines.append(f"  Slack:  request URL {base}/slack/events")
    if settings.slack_app_token:
        lines.append("  Slack:  Socket Mode (SLACK_APP_TOKEN)")
    if not settings.api_tokens:
        lines.append("  no SZRAG_API_TOKENS: the API is open to this machine only")
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level, proxy_headers=False)


def service_plan(repos: tuple[str, ...], service_file: Path | None) -> ServicePlan | None:
    """The repositories ``--repo`` and ``--config`` name (None: the one ``--root``)."""
    from szrag.service.repositories import plan_from_options, read_service_file

    if repos and service_file is not None:
        raise click.UsageError("give --repo NAME=PATH or --config FILE, not both")
    if service_file is not None:
        plan = read_service_file(service_file)
        if not plan.repositories:
            raise ConfigError(f"{service_file} lists no repository: `szrag repos add` adds one")
        return plan
    return plan_from_options(repos) if repos else None


def clone_first(plan: ServicePlan) -> None:
    """Clone the plan's repositories in order until one succeeds (the server clones the
    rest in the background); RepositoryError naming each failure when none does."""
    from szrag.base.errors import RepositoryError
    from szrag.service.clones import sync

    failures = []
    for spec in plan.repositories:
        with console.status(f"Cloning {spec.name} from {spec.shown_url}..."):
            try:
                sync(spec, os.environ)
            except RepositoryError as error:
                failures.append(error.message)
                continue
        return
    raise RepositoryError("no repository of the service can be served: " + "; ".join(failures))


def check_port_free(host: str, port: int) -> None:
    """A clear error before anything claims to serve when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise ConfigError(
                f"cannot listen on {host}:{port} ({error.strerror or error}): is another server"
                " running there? choose another with --port"
            ) from None


def model_line(settings: Settings) -> str:
    """Which model answers, or that none does and what to set."""
    if settings.has_key:
        return f"{settings.ai_model} at {settings.endpoint}"
    return (
        "none configured (no AI_API_KEY): answers come from retrieval alone; set AI_API_KEY"
        " (and AI_URL, AI_MODEL for another provider or model)"
    )
