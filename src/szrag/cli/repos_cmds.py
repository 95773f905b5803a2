"""``szrag repos list|add|remove``: the repositories of a service file (``szrag.toml``)."""

from __future__ import annotations

from pathlib import Path

import click

from szrag.cli.common import console, handle_errors, json_option, print_json
from szrag.service.repositories import (
    CLONES,
    SERVICE_FILE,
    VARIABLE,
    RepositorySpec,
    ServicePlan,
    checked_name,
    read_service_file,
    write_service_file,
)

config_option = click.option(
    "--config",
    "service_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=SERVICE_FILE,
    show_default=True,
    help="The service file.",
)


def register(group: click.Group) -> None:
    """Add ``repos`` to ``group``."""
    group.add_command(repos)


@click.group()
def repos() -> None:
    """The repositories a service serves (`szrag serve --config FILE`)."""


def _plan(service_file: Path) -> ServicePlan:
    if not service_file.exists():
        return ServicePlan((), file=service_file.resolve())
    return read_service_file(service_file)


@repos.command("list")
@config_option
@json_option
@handle_errors
def list_repositories(service_file: Path, as_json: bool) -> None:
    """List the repositories of the service file."""
    plan = _plan(service_file)
    if as_json:
        print_json(list(plan.repositories))
        return
    if not plan.repositories:
        console.print(f"no repositories in {service_file}; `szrag repos add NAME PATH` adds one")
        return
    for spec in plan.repositories:
        where = (
            f"{spec.shown_url} ({spec.branch or 'default branch'})" if spec.remote else spec.path
        )
        channels = f"  Slack: {', '.join(spec.slack_channels)}" if spec.slack_channels else ""
        console.print(f"{spec.name}  {where}{channels}", highlight=False, markup=False)


@repos.command("add")
@click.argument("name")
@click.argument("location")
@click.option("--branch", help="The branch of a repository given by URL.")
@click.option(
    "--webhook-secret-env",
    "secret_env",
    metavar="VARIABLE",
    help="The environment variable holding the push webhook's secret (a URL's repository).",
)
@click.option("--slack-channel", "channels", multiple=True, help="A Slack channel id (repeatable).")
@config_option
@handle_errors
def add(
    name: str,
    location: str,
    branch: str | None,
    secret_env: str | None,
    channels: tuple[str, ...],
    service_file: Path,
) -> None:
    """Add repository NAME at LOCATION (a folder, or a git URL that the server clones and
    keeps fetched)."""
    plan = _plan(service_file)
    checked_name(name)
    remote = "://" in location or location.startswith("git@")
    if (branch or secret_env) and not remote:
        raise click.UsageError(
            "--branch and --webhook-secret-env belong to a repository given by URL"
        )
    if secret_env is not None and not VARIABLE.fullmatch(secret_env):
        raise click.UsageError(
            "--webhook-secret-env names an environment variable (the secret is not written)"
        )
    base = service_file.resolve().parent
    if remote:
        spec = RepositorySpec(
            name, base / CLONES / name, location, branch, channels, webhook_secret_env=secret_env
        )
    else:
        spec = RepositorySpec(name, (Path.cwd() / location).resolve(), slack_channels=channels)
    updated = plan.with_repositories([*plan.repositories, spec])
    write_service_file(updated, service_file)
    console.print(f"added {name} to {service_file}", highlight=False, markup=False)
    if remote:
        console.print(
            f"  {spec.shown_url} is cloned into {base / CLONES / name} when the server starts",
            highlight=False,
            markup=False,
        )


@repos.command("remove")
@click.argument("name")
@config_option
@handle_errors
def remove(name: str, service_file: Path) -> None:
    """Remove repository NAME (its index and clone are left where they are)."""
    plan = _plan(service_file)
    plan.named(name)  # an unknown name is an error that lists the known ones
    updated = plan.with_repositories(spec for spec in plan.repositories if spec.name != name)
    write_service_file(updated, service_file)
    console.print(f"removed {name} from {service_file}", highlight=False, markup=False)
