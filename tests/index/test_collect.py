from __future__ import annotations

import os
from pathlib import Path

import pytest

from szrag.base.config import SLACKZILLA, RepoConfig, load_repo_config
from szrag.base.errors import ConfigError
from szrag.index.collect import collect


def _write(root: Path, relative: str, text: str = "x\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _paths(root: Path, config: RepoConfig) -> list[str]:
    return [item.path for item in collect(root, config).files]


def test_slackzilla_profile_follows_the_spec_rules(retrieval_repo: Path) -> None:
    result = collect(retrieval_repo, RepoConfig(profile=SLACKZILLA))
    paths = [item.path for item in result.files]
    assert paths == [
        "README.md",
        "config/pagebot.conf",
        "docs/architecture.md",
        "docs/security.md",
        "package.json",
        "server/auth.js",
        "server/lib/systemd.js",
        "server/scheduler.js",
        "server/webhook.js",
    ]
    # .env files, package-lock.json, node_modules/ and prompts/ stay out; .py is not a spec extension
    assert [item.path for item in result.images] == [
        "assets/dashboard.webp",
        "assets/git-workflow.gif",
        "assets/logo.png",
        "docs/images/architecture-diagram.png",
        "docs/images/calc-flow.jpg",
    ]


def test_every_spec_extension_and_ignore_rule(tmp_path: Path) -> None:
    for name in (
        "a.js", "b.jsx", "c.mjs", "d.json", "e.md", "f.css", "g.html", "h.yml",
        "i.service", "j.conf", "k.example", "skip.ts", "skip.py", "skip.txt",
        "feedback.json", "metrics.json", "package-lock.json", "prod.env", "x/.env",
    ):  # fmt: skip
        _write(tmp_path, name)
    for directory in (
        ".git",
        ".rag",
        "node_modules",
        "dist",
        "logs",
        "archive",
        ".vscode",
        "priv",
        "prompts",
    ):
        _write(tmp_path, f"{directory}/hidden.js")
    paths = _paths(tmp_path, RepoConfig(profile=SLACKZILLA))
    assert paths == [
        "a.js", "b.jsx", "c.mjs", "d.json", "e.md", "f.css", "g.html", "h.yml",
        "i.service", "j.conf", "k.example",
    ]  # fmt: skip


def test_default_profile_adds_languages_and_text_formats(tmp_path: Path) -> None:
    for name in ("a.py", "b.pyi", "c.ts", "d.tsx", "e.cjs", "f.mts", "g.cts", "h.yaml", "i.toml",
                 "j.txt", "k.rst", "l.ini", "m.cfg", "n.sh", "o.js", "p.bin"):  # fmt: skip
        _write(tmp_path, name)
    _write(tmp_path, ".venv/lib/site.py")
    _write(tmp_path, "__pycache__/a.py")
    assert _paths(tmp_path, RepoConfig()) == [
        "a.py", "b.pyi", "c.ts", "d.tsx", "e.cjs", "f.mts", "g.cts", "h.yaml", "i.toml",
        "j.txt", "k.rst", "l.ini", "m.cfg", "n.sh", "o.js",
    ]  # fmt: skip


def test_gitignore_files_nested_and_ragignore_are_honoured(tmp_path: Path) -> None:
    _write(tmp_path, ".gitignore", "*.log.md\nbuild-output/\n/only-root.md\n")
    _write(tmp_path, ".ragignore", "secret-notes/\n")
    _write(tmp_path, "keep.md")
    _write(tmp_path, "debug.log.md")
    _write(tmp_path, "build-output/a.js")
    _write(tmp_path, "only-root.md")
    _write(tmp_path, "sub/only-root.md")
    _write(tmp_path, "secret-notes/plan.md")
    _write(tmp_path, "pkg/.gitignore", "generated.js\n!keep-me.js\n*.js\n!keep-me.js\n")
    _write(tmp_path, "pkg/generated.js")
    _write(tmp_path, "pkg/keep-me.js")
    _write(tmp_path, "other/generated.js")
    assert _paths(tmp_path, RepoConfig()) == [
        "keep.md",
        "other/generated.js",
        "pkg/keep-me.js",
        "sub/only-root.md",
    ]
    # the spec profile ignores ignore files
    assert "debug.log.md" in _paths(tmp_path, RepoConfig(profile=SLACKZILLA))


def test_repository_configuration_adds_extensions_ignores_and_limits(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        '[tool.szrag]\nextra_extensions = [".sql"]\nextra_ignores = ["fixtures/"]\nmax_file_bytes = 10\n',
    )
    _write(tmp_path, "q.sql", "select 1;\n")
    _write(tmp_path, "fixtures/data.md")
    _write(tmp_path, "big.md", "x" * 11)
    config = load_repo_config(tmp_path)
    result = collect(tmp_path, config)
    assert [item.path for item in result.files] == ["q.sql"]  # pyproject.toml is 100+ bytes
    reasons = {skip.path: skip.reason for skip in result.skipped}
    assert reasons["big.md"] == "too large (11 bytes > 10)"
    assert reasons["pyproject.toml"].startswith("too large")


def test_own_config_file_wins_and_profile_override(tmp_path: Path) -> None:
    _write(tmp_path, "pyproject.toml", '[tool.szrag]\nprofile = "default"\n')
    _write(tmp_path, ".rag/config.toml", 'profile = "slackzilla"\n')
    assert load_repo_config(tmp_path).profile.name == "slackzilla"
    assert load_repo_config(tmp_path, profile="default").profile.name == "default"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('profile = "fancy"', "unknown profile 'fancy'"),
        ("max_file_bytes = -1", "max_file_bytes must be a positive integer"),
        ('extra_extensions = ["sql"]', "must start with a dot"),
        ("colour = 1", "unknown keys colour"),
        ("profile = ", "invalid TOML"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path, ".rag/config.toml", text + "\n")
    with pytest.raises(ConfigError, match=message):
        load_repo_config(tmp_path)


def test_symlinks_never_leave_the_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    outside = tmp_path / "outside"
    _write(outside, "secret.md", "outside\n")
    _write(root, "inside.md")
    os.symlink(outside / "secret.md", root / "link-out.md")
    os.symlink(outside, root / "dir-out")
    os.symlink(root / "inside.md", root / "link-in.md")
    os.symlink(root / "missing.md", root / "broken.md")
    os.symlink(root, root / "loop")
    result = collect(root, RepoConfig())
    assert [item.path for item in result.files] == ["inside.md", "link-in.md"]
    reasons = {skip.path: skip.reason for skip in result.skipped}
    assert reasons == {
        "broken.md": "broken symlink",
        "dir-out": "symlink points outside the root",
        "link-out.md": "symlink points outside the root",
    }


IGNORE_CASES = {
    "allow-list": (["*", "!*/", "!*.js"], {}),
    "allow-list of a folder": (["*", "!*/", "!src/**"], {}),
    "allow-list of a folder anchored": (["/*", "!/docs/", "!/docs/**"], {}),
    "everything below a folder": (["src/**", "!src/deep/er.md", "**/sub/**"], {}),
    "directory only": (["artifacts/", "*.log.md"], {}),
    "anchored and nested": (["/top.md", "docs/*.md", "!docs/keep.md"], {}),
    "deeper file re-includes": (["*.md"], {"sub/.gitignore": ["!wanted.md"]}),
    "double star": (["**/gen/**", "a/**/z.py"], {}),
    "excluded directory stays excluded": (["secret/", "!secret/open.md"], {}),
    "character classes and escapes": (["[ab].py", "\\#hash.md", "*.p[yx]"], {}),
    "plain names, paths and extensions, overriding each other": (
        ["*.md", "!docs/guide.md", "secret", "a.py", "!*.py", "src/deep/er.js", "docs/keep.md/"],
        {"src/.gitignore": ["app.py", "/deep/", "!deep/er.md"]},
    ),
}
FILES = [
    "top.md",
    "a.js",
    "a.py",
    "b.py",
    "c.py",
    "#hash.md",
    "notes.log.md",
    "src/app.js",
    "src/app.py",
    "src/deep/er.js",
    "src/deep/er.md",
    "artifacts/out.js",
    "src/artifacts/out.js",
    "docs/guide.md",
    "docs/keep.md",
    "docs/sub/inner.md",
    "sub/wanted.md",
    "sub/other.md",
    "gen/x.py",
    "pkg/gen/y.py",
    "a/z.py",
    "a/b/c/z.py",
    "secret/open.md",
    "secret/closed.md",
]


@pytest.mark.parametrize("case", sorted(IGNORE_CASES))
def test_ignore_rules_agree_with_git(tmp_path: Path, case: str) -> None:
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root_lines, nested = IGNORE_CASES[case]
    for name in FILES:
        _write(tmp_path, name, f"# {name}\nbody text\n")
    (tmp_path / ".gitignore").write_text("\n".join(root_lines) + "\n")
    for name, lines in nested.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "ls-files", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    wanted = {path for path in listed if path in FILES}

    found = {entry.path for entry in collect(tmp_path, RepoConfig()).files}

    assert found == wanted
