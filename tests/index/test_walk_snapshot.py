"""A walk replays the listings of directories unchanged since the last walk: the outcome is
always what a fresh walk finds, and unchanged directories are not listed again."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from szrag.base.config import DEFAULT, RepoConfig
from szrag.index import store
from szrag.index.build import load_index, refresh_index
from szrag.index.collect import Collection, WalkSnapshot, _Walk, collect

CONFIG = RepoConfig(profile=DEFAULT)


def _write(root: Path, relative: str, text: str = "x = 1\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _age(root: Path) -> None:
    """Every directory and ignore file last changed a minute ago: old enough to be trusted."""
    past = time.time() - 60
    for directory, _, names in os.walk(root):
        for name in names:
            if name in (".gitignore", ".ragignore"):
                os.utime(os.path.join(directory, name), (past, past))
        os.utime(directory, (past, past))


def _outcome(found: Collection) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    return (
        [item.path for item in found.files],
        [item.path for item in found.images],
        [(skip.path, skip.reason) for skip in found.skipped],
    )


def _tree(root: Path) -> None:
    _write(root, "app.py")
    _write(root, "src/pkg/core.py")
    _write(root, "src/pkg/logo.png", "png")
    _write(root, "docs/guide.md", "# Guide\n")
    _write(root, "build/out.py")
    _write(root, ".gitignore", "build/\n*.log\n")
    _write(root, "src/.gitignore", "generated/\n")
    _write(root, "src/generated/g.py")
    _write(root, "env311/pyvenv.cfg", "home = /usr\n")
    _write(root, "env311/lib/site.py")


class _Listings:
    """Counts the directories a walk lists."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.listed: list[str] = []
        original = _Walk._list

        def counting(walk: _Walk, directory: str, prefix: str, *rest: object) -> None:
            self.listed.append(prefix)
            original(walk, directory, prefix, *rest)  # type: ignore[arg-type]

        monkeypatch.setattr(_Walk, "_list", counting)


def _aged_and_walked(root: Path) -> WalkSnapshot:
    """The tree, aged, and the snapshot of its first walk (kept and read back)."""
    _tree(root)
    _age(root)
    return _walked(root)


def _walked(root: Path) -> WalkSnapshot:
    first = collect(root, CONFIG)
    assert first.snapshot is not None
    kept = WalkSnapshot.from_json(first.snapshot.to_json())
    assert kept == first.snapshot
    return kept


def test_an_unchanged_tree_is_replayed_without_listing_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _aged_and_walked(tmp_path)
    listings = _Listings(monkeypatch)
    replayed = collect(tmp_path, CONFIG, snapshot)
    assert listings.listed == []
    assert _outcome(replayed) == _outcome(collect(tmp_path, CONFIG))
    assert _outcome(replayed)[0] == ["app.py", "docs/guide.md", "src/pkg/core.py"]


def test_added_removed_and_edited_files_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _aged_and_walked(tmp_path)
    _write(tmp_path, "src/pkg/new.py")
    (tmp_path / "docs/guide.md").unlink()
    edited = _write(tmp_path, "app.py", "x = 2  # longer\n")
    listings = _Listings(monkeypatch)
    replayed = collect(tmp_path, CONFIG, snapshot)
    assert sorted(listings.listed) == ["docs/", "src/pkg/"]  # the two whose entries changed
    assert _outcome(replayed)[0] == ["app.py", "src/pkg/core.py", "src/pkg/new.py"]
    assert next(f for f in replayed.files if f.path == "app.py").stat.size == edited.stat().st_size
    assert _outcome(replayed) == _outcome(collect(tmp_path, CONFIG))


def test_an_ignore_file_edited_in_place_decides_its_subtree_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _aged_and_walked(tmp_path)
    # rewritten in place: the directory's mtime does not change, the file's does
    (tmp_path / "src/.gitignore").write_text("pkg/core.py\n")
    os.utime(tmp_path / "src", (time.time() - 60, time.time() - 60))
    listings = _Listings(monkeypatch)
    replayed = collect(tmp_path, CONFIG, snapshot)
    assert "src/" in listings.listed and "src/pkg/" in listings.listed
    assert _outcome(replayed)[0] == ["app.py", "docs/guide.md", "src/generated/g.py"]
    assert _outcome(replayed) == _outcome(collect(tmp_path, CONFIG))


def test_a_folder_that_becomes_a_virtualenv_is_left_out_and_back_in(tmp_path: Path) -> None:
    snapshot = _aged_and_walked(tmp_path)
    _write(tmp_path, "docs/pyvenv.cfg", "home = /usr\n")
    replayed = collect(tmp_path, CONFIG, snapshot)
    assert "docs/guide.md" not in _outcome(replayed)[0]
    (tmp_path / "env311/pyvenv.cfg").unlink()
    assert replayed.snapshot is not None
    again = collect(tmp_path, CONFIG, replayed.snapshot)
    assert "env311/lib/site.py" in _outcome(again)[0]
    assert _outcome(again) == _outcome(collect(tmp_path, CONFIG))


def test_a_directory_changed_within_the_last_seconds_is_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    os.utime(tmp_path / "docs")  # now: a change in the same tick would keep this mtime
    snapshot = _walked(tmp_path)
    assert snapshot.listings["docs/"].signature is None
    assert snapshot.listings[""].signature is not None
    listings = _Listings(monkeypatch)
    collect(tmp_path, CONFIG, snapshot)
    assert listings.listed == ["docs/"]


def test_a_listing_with_an_unreadable_entry_is_not_replayed(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "src/outside").symlink_to(tmp_path.parent)
    _age(tmp_path)
    snapshot = _walked(tmp_path)
    assert snapshot.listings["src/"].signature is None  # the skip's reason is found again
    replayed = collect(tmp_path, CONFIG, snapshot)
    assert ("src/outside", "symlink points outside the root") in _outcome(replayed)[2]


def test_another_configuration_or_a_malformed_snapshot_lists_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _aged_and_walked(tmp_path)
    listings = _Listings(monkeypatch)
    other = RepoConfig(profile=DEFAULT, extra_ignores=("docs/",))
    assert "docs/guide.md" not in _outcome(collect(tmp_path, other, snapshot))[0]
    assert "" in listings.listed
    broken_entries = '{"fingerprint": "x", "listings": {"": [null, [], "t/a/d", []]}}'
    for broken in (
        "",
        "[]",
        '{"fingerprint": 1}',
        '{"fingerprint": "x", "listings": {"": [1]}}',
        broken_entries,
        broken_entries.replace("t/a/d", "x/a"),
    ):
        assert WalkSnapshot.from_json(broken) is None


def test_the_index_keeps_the_walk_and_a_refresh_finds_every_change(tmp_path: Path) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    index = load_index(tmp_path, config=CONFIG)
    try:
        kept = store.read_walk(index.conn)
        assert kept is not None and WalkSnapshot.from_json(kept) is not None
        _write(tmp_path, "src/pkg/added.py", "def added():\n    return 1\n")
        (tmp_path / "docs/guide.md").unlink()
        report = refresh_index(index)
        assert report.added == ["src/pkg/added.py"] and report.removed == ["docs/guide.md"]
        assert refresh_index(index).changed_anything is False
        assert store.read_walk(index.conn) != kept  # the new listings are kept
    finally:
        index.close()
