"""``szrag mcp``: the repository's tools for MCP clients, over stdio or streamable HTTP; for
one repository (``--root``) or several (``--repo NAME=PATH``, ``--config szrag.toml``)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import click

from szrag.base.errors import ConfigError
from szrag.cli.common import config_for, err_console, handle_errors, open_index, root_option
from szrag.cli.serve_cmds import DEFAULT_HOST, check_port_free, service_plan

DEFAULT_MCP_PORT = 8788


def register(group: click.Group) -> None:
    """Add ``mcp`` to ``group``."""
    group.add_command(mcp_command)


@click.command("mcp")
@root_option
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="NAME=PATH",
    help="Serve this repository under NAME (repeatable); tools take a repository.",
)
@click.option(
    "--config",
    "service_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A service file (szrag.toml) listing the repositories to serve.",
)
@click.option("--http", "over_http", is_flag=True, help="Serve streamable HTTP, not stdio.")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address (with --http).")
@click.option(
    "--port",
    default=DEFAULT_MCP_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (with --http).",
)
@click.option(
    "--watch/--no-watch",
    default=True,
    show_default=True,
    help="Keep the index fresh while serving.",
)
@handle_errors
def mcp_command(
    root: Path,
    repos: tuple[str, ...],
    service_file: Path | None,
    over_http: bool,
    host: str,
    port: int,
    watch: bool,
) -> None:
    """Serve search, code structure and the live tools to an MCP client.

    With --repo or --config every code tool takes a repository (without one, search_code
    and get_context route the question, the others ask the first repository), and so does
    the prompt; the live tools and resources are the first repository's.

    Over stdio (the default) the client starts this command and talks on its stdin and
    stdout; the process ends when the client closes stdin. With --http it serves
    http://HOST:PORT/mcp, on loopback unless SZRAG_API_TOKENS is set, with the API's tokens.
    Nothing but the protocol is written to stdout; progress and warnings go to stderr.
    """
    from szrag.mcp import McpFace, serve_http, serve_stdio

    plan = service_plan(repos, service_file)
    if plan is not None:
        root = plan.repositories[0].path
    if not root.is_dir():
        raise ConfigError(f"{root} is not a directory")
    config = config_for(root.resolve())  # the file and the environment, read once
    if over_http:
        from szrag.server.auth import check_exposure

        check_exposure(host, config.server)
        check_port_free(host, port)
    with open_index(root):  # built or refreshed with the progress bar, warnings on stderr
        pass
    if plan is None:
        face = McpFace.open(config, privileged=not over_http)
    else:  # the first opened now; the others when a tool first asks about them
        face = McpFace.open_service(plan, os.environ, privileged=not over_http)
    try:
        if over_http:
            shown = f"[{host}]" if ":" in host else host
            served = ", ".join(face.names()) if plan is not None else face.index.root
            err_console.print(
                f"szrag MCP serving {served} at http://{shown}:{port}/mcp",
                highlight=False,
                markup=False,
            )
            anyio.run(lambda: serve_http(face, host=host, port=port, watch=watch))
        else:
            anyio.run(lambda: serve_stdio(face, watch=watch))
    except KeyboardInterrupt:
        pass
    finally:
        face.close()
