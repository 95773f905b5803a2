"""``szrag index`` and ``szrag stats``."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import click

from szrag.base.public import public, public_dict, public_timestamp, rounded
from szrag.cli.common import (
    console,
    handle_errors,
    json_option,
    print_json,
    progress_bar,
    report_shown,
    root_option,
    say,
    show_report,
    store_from_environment,
    store_option,
)
from szrag.index import Index, RefreshReport, Skip, build_index, load_index


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What ``szrag index --json`` says of a build or refresh (``added``: a count after a
    rebuild, else the paths)."""

    root: str
    index: str
    profile: str
    rebuilt: bool
    reason: str | None
    files: int
    chunks: int
    images: int
    added: list[str] | int
    changed: list[str]
    removed: list[str]
    touched: list[str]
    skipped: list[Skip]
    warnings: list[str]
    notes: list[str]
    elapsed_seconds: float = field(metadata=public(convert=rounded(3)))


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What ``szrag stats`` says of an index; ``counts`` are rows by table, ``types`` files
    by type."""

    root: str
    index: str
    schema_version: int
    generated_at: str | None
    profile: str | None
    bytes: int
    counts: Mapping[str, int] = field(metadata=public(spread=True))
    types: Mapping[str, int]


def _report_dict(index: Index, report: RefreshReport) -> dict[str, object]:
    return public_dict(
        IndexReport(
            root=str(index.root),
            index=str(index.path),
            profile=index.config.profile.name,
            rebuilt=report.rebuilt,
            reason=report.reason,
            files=report.files,
            chunks=report.chunks,
            images=report.images,
            added=report.added if not report.rebuilt else len(report.added),
            changed=report.changed,
            removed=report.removed,
            touched=report.touched,
            skipped=report.skipped,
            warnings=report.warnings,
            notes=report.notes,
            elapsed_seconds=report.elapsed,
        )
    )


def _print_report(index: Index, report: RefreshReport) -> None:
    what = "built" if report.rebuilt else "refreshed"
    say(
        f" {index.path}: {report.files} files, {report.chunks} chunks, {report.images} images"
        f" in {report.elapsed:.2f}s (profile {index.config.profile.name})",
        lead=what,
        style="bold",
    )
    if not report.rebuilt:
        say(
            f"  {len(report.added)} added, {len(report.changed)} changed,"
            f" {len(report.removed)} removed, {len(report.touched)} touched without content"
            " change"
        )
    show_report(report)
    if report.skipped:
        say(f"  skipped {len(report.skipped)} file(s):")
        for skip in report.skipped:
            say(f"    {skip.path}: {skip.reason}")


@click.command("index")
@root_option
@click.option("--rebuild", is_flag=True, help="Rebuild from scratch instead of refreshing.")
@click.option("--verify", is_flag=True, help="Hash every file, not only those whose stat changed.")
@click.option(
    "--profile", type=click.Choice(["default", "slackzilla"]), help="Override the profile."
)
@store_option(
    "Also publish each --repo to this PostgreSQL store (postgresql://user@host/db;"
    " default SZRAG_STORE)."
)
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="NAME=PATH",
    help="With --store: index the repository at PATH and publish it as NAME (repeatable).",
)
@click.option(
    "--watch",
    is_flag=True,
    help="With --store: keep running, publishing each --repo again whenever its files change"
    " (the deployment's one indexer; replicas run no watcher).",
)
@json_option
@handle_errors
def index_command(
    root: Path,
    rebuild: bool,
    verify: bool,
    profile: str | None,
    store: str | None,
    repos: tuple[str, ...],
    watch: bool,
    as_json: bool,
) -> None:
    """Build or refresh the index of a repository and report what changed; with --store,
    publish each --repo to PostgreSQL as a new generation, read whole or not at all; with
    --watch as well, keep publishing each change until stopped (Ctrl-C or SIGTERM)."""
    if store is not None and not repos and store_from_environment():
        store = None  # SZRAG_STORE names where --repo publishes; without one, index --root
    if store is None and repos:
        raise click.UsageError("--repo names a repository to publish: give --store too")
    if store is not None and not repos:
        raise click.UsageError("--store publishes the repositories named by --repo NAME=PATH")
    if watch:
        if store is None:
            raise click.UsageError("--watch publishes: give --store URL and --repo NAME=PATH")
        _watch_and_publish(store, [_named_path(item) for item in repos])
        return
    targets = [_named_path(item) for item in repos] if store is not None else [(None, root)]
    published: list[dict[str, object]] = []
    for name, path in targets:
        index, report = _indexed(path, rebuild, verify, profile, as_json)
        with index:
            shown = _report_dict(index, report)
            if store is not None and name is not None:
                from szrag.index.pg import publish  # here: only a publish loads psycopg

                done = publish(index, store, name)
                shown.update(
                    repository=name,
                    store=done.location,
                    generation=done.generation,
                    filesRewritten=done.rewritten,
                )
            if as_json:
                published.append(shown)
            else:
                _print_report(index, report)
                if store is not None:
                    say(
                        f" {name} as generation {done.generation} to {done.location}"
                        f" ({_written(done.rewritten)})",
                        lead="published",
                        style="bold",
                    )
    if as_json:
        print_json(published if store is not None else published[0])


def _watch_and_publish(store: str, targets: list[tuple[str, Path]]) -> None:
    """The deployment's indexer: publish each target now and after each change, until
    SIGINT or SIGTERM."""
    import asyncio
    import signal

    import anyio

    from szrag.index.pg import Published
    from szrag.index.pg.schema import shown_url
    from szrag.service.indexer import Indexer

    def told(done: Published) -> None:
        say(
            f" {done.repository} as generation {done.generation} ({done.files} files,"
            f" {done.chunks} chunks; {_written(done.rewritten)}) in {done.elapsed:.2f}s",
            lead="published",
            style="bold",
        )

    async def run() -> None:
        stop = anyio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
        names = ", ".join(f"{name} ({path})" for name, path in targets)
        say(f"watching {names}; publishing to {shown_url(store)} (Ctrl-C stops)")
        await Indexer(targets, store, on_publish=told).run(stop)

    asyncio.run(run())


def _written(rewritten: int | None) -> str:
    """What a publish wrote, in words."""
    if rewritten is None:
        return "every row written"
    return f"{rewritten} file{'' if rewritten == 1 else 's'} written again"


def _named_path(item: str) -> tuple[str, Path]:
    """``NAME=PATH`` as the name and the folder; UsageError when it is not one."""
    name, separator, path = item.partition("=")
    if not separator or not name or not path:
        raise click.UsageError(f"--repo {item!r}: give it as NAME=PATH")
    if not Path(path).is_dir():
        raise click.UsageError(f"--repo {item!r}: {path} is not a directory")
    return name, Path(path)


def _indexed(
    root: Path, rebuild: bool, verify: bool, profile: str | None, as_json: bool
) -> tuple[Index, RefreshReport]:
    """The index of ``root``, built or refreshed, and the report of what was done."""
    shown = contextlib.nullcontext() if as_json else report_shown()  # JSON carries them
    with progress_bar(not as_json) as progress, shown:
        if rebuild:
            index = build_index(root, profile=profile, progress=progress)
        else:  # a damaged database is set aside and rebuilt, as every command does
            index = load_index(
                root, profile=profile, progress=progress, verify=verify, lock_wait=None
            )
    return index, index.last_report


@click.command("stats")
@root_option
@json_option
@handle_errors
def stats_command(root: Path, as_json: bool) -> None:
    """Describe the index: version, when it was built, and what it holds."""
    from rich.table import Table  # here: `szrag index` prints no table

    with load_index(root, refresh=False) as index:
        meta = index.meta()
        counts = index.counts()
        types: dict[str, int] = {}
        for entry in index.file_entries():
            types[entry.type] = types.get(entry.type, 0) + 1
        size = index.path.stat().st_size if index.path.exists() else 0
        stats = IndexStats(
            root=str(index.root),
            index=str(index.path),
            schema_version=int(meta.get("schema_version", 0)),
            generated_at=public_timestamp(meta.get("generated_at")),
            profile=meta.get("profile"),
            bytes=size,
            counts=counts,
            types=dict(sorted(types.items())),
        )
    if as_json:
        print_json(stats)
        return
    data = public_dict(stats)
    table = Table(show_header=False, box=None, pad_edge=False)
    for key, value in data.items():
        if key != "types":
            table.add_row(_words(key), str(value))
    for kind, count in types.items():
        table.add_row(f"  {kind} files", str(count))
    console.print(table, highlight=False)


def _words(name: str) -> str:
    """``schemaVersion`` -> ``schema version``."""
    return "".join(f" {char.lower()}" if char.isupper() else char for char in name)


def register(group: click.Group) -> None:
    """Add the index commands to ``group``."""
    for command in (index_command, stats_command):
        group.add_command(command)
