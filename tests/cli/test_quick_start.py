"""The README's quick start for one's own repository, end to end, as a user follows it.

szrag is installed into a fresh virtual environment with pip, and its ``szrag`` command is
run from that environment on a fresh git repository: ``szrag index``, then ``szrag ask``
without a key and with a model (the scripted provider on 127.0.0.1).

Offline, two things stand in for the network: the new environment sees the test
environment's site-packages (the dependencies pip would download), and the wheel pip
installs is assembled here from ``pyproject.toml`` (its name, version, dependencies, console
script, packages and package data), because building it needs setuptools 77 or later,
which no offline environment can be counted on to have. pip itself installs it and writes
the ``szrag`` entry point, and the test checks that the command runs the installed copy.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from szrag.llm.testing import ScriptedProvider, text_reply

PROJECT = Path(__file__).resolve().parents[2]
QUESTION = "where are webhooks verified?"  # the README's example
ANSWER = "Webhooks are verified by verify_webhook in app/webhooks.py."


def _project_files(project: Path, config: dict[str, object]) -> dict[str, Path]:
    """What setuptools puts in the wheel: the modules of every package under ``where`` and
    each package's data patterns (``[tool.setuptools]``), by their path in the wheel."""
    tool = config["tool"]
    assert isinstance(tool, dict)
    setuptools = tool["setuptools"]
    where = project / setuptools["packages"]["find"]["where"][0]
    packages = [path.parent for path in where.rglob("__init__.py")]
    files = {
        module.relative_to(where).as_posix(): module
        for package in packages
        for module in package.glob("*.py")
    }
    for name, patterns in setuptools.get("package-data", {}).items():
        for pattern in patterns:
            for data in (where / name.replace(".", "/")).glob(pattern):
                if data.is_file():
                    files[data.relative_to(where).as_posix()] = data
    return files


def _digest(content: bytes) -> str:
    encoded = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
    return f"sha256={encoded.decode()},{len(content)}"


def build_wheel(project: Path, directory: Path) -> Path:
    """A pure-Python wheel of ``project`` as its ``pyproject.toml`` describes it."""
    config = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    metadata = config["project"]
    name, version = metadata["name"], metadata["version"]
    info = f"{name}-{version}.dist-info"
    scripts = "".join(f"{script} = {target}\n" for script, target in metadata["scripts"].items())
    contents: dict[str, bytes] = {
        path: source.read_bytes() for path, source in _project_files(project, config).items()
    }
    contents[f"{info}/METADATA"] = "\n".join(
        [
            "Metadata-Version: 2.1",
            f"Name: {name}",
            f"Version: {version}",
            f"Requires-Python: {metadata['requires-python']}",
            *(f"Requires-Dist: {requirement}" for requirement in metadata["dependencies"]),
            "",
        ]
    ).encode()
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: szrag-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    contents[f"{info}/entry_points.txt"] = f"[console_scripts]\n{scripts}".encode()
    record = [f"{path},{_digest(content)}" for path, content in contents.items()]
    contents[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,", ""]).encode()
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in contents.items():
            archive.writestr(path, content)
    return wheel


def install_into_fresh_environment(target: Path, wheel: Path) -> Path:
    """A new virtual environment with ``wheel`` installed by pip; its ``bin`` directory."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(target)
    purelib = Path(
        sysconfig.get_paths(vars={"base": str(target), "platbase": str(target)})["purelib"]
    )
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # plain path lines: the test environment's own .pth files (its editable szrag) stay unread
    (purelib / "_test_environment.pth").write_text("\n".join(sorted(here)) + "\n")
    python = target / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir",
         "--disable-pip-version-check", "--quiet",
         # the test environment's szrag is visible too: install beside it, never over it
         "--ignore-installed", str(wheel)],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return python.parent


def _repository(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "webhooks.py").write_text(
        "import hmac\n\n\n"
        "def verify_webhook(secret: bytes, body: bytes, signature: str) -> bool:\n"
        '    """Check the signature GitHub sends with every webhook delivery."""\n'
        '    expected = hmac.new(secret, body, "sha256").hexdigest()\n'
        "    return hmac.compare_digest(expected, signature)\n"
    )
    (root / "app" / "server.py").write_text(
        "from app.webhooks import verify_webhook\n\n\n"
        "def handle(request):\n"
        '    if not verify_webhook(b"secret", request.body, request.signature):\n'
        "        return 401\n"
        "    return 200\n"
    )
    (root / "README.md").write_text("# Hooks\n\nA small service that receives webhooks.\n")
    return root


def test_the_quick_start_on_a_fresh_repository(
    tmp_path: Path, provider_server: tuple[ScriptedProvider, str]
) -> None:
    bin_directory = install_into_fresh_environment(
        tmp_path / "venv", build_wheel(PROJECT, tmp_path)
    )
    repository = _repository(tmp_path / "repository")
    environment = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")
    }
    environment["PATH"] = f"{bin_directory}{os.pathsep}{environment.get('PATH', '')}"

    def szrag(*arguments: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["szrag", *arguments],
            cwd=repository,
            env={**environment, **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )

    where = subprocess.run(
        [str(bin_directory / "python"), "-c", "import szrag; print(szrag.__file__)"],
        env=environment, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(bin_directory.parent)
    assert shutil.which("szrag", path=environment["PATH"]) == str(bin_directory / "szrag")

    indexed = szrag("index")
    assert indexed.returncode == 0, indexed.stderr
    assert (repository / ".rag" / "index.db").is_file()
    assert "/.rag/" in (repository / ".git" / "info" / "exclude").read_text().splitlines()
    assert "added /.rag/ to .git/info/exclude" in indexed.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repository, capture_output=True, text=True
    )
    assert ".rag" not in status.stdout

    local = szrag("ask", QUESTION)
    assert local.returncode == 0, local.stderr
    assert "app/webhooks.py:" in local.stdout
    assert "def verify_webhook(secret: bytes, body: bytes, signature: str)" in local.stdout
    assert "AI_API_KEY" in local.stdout and "AI_URL" in local.stdout  # how to add a model

    provider, base_url = provider_server
    provider.reset()
    provider.script(text_reply(ANSWER))
    answered = szrag(
        "ask",
        QUESTION,
        AI_URL=base_url,
        AI_API_KEY="test-key",
        AI_MODEL="test-model",
        SZRAG_AI_RETRIES="0",
    )
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.count(ANSWER) == 1
    assert "app/webhooks.py:" in answered.stdout  # the sources follow the answer
    request = provider.requests[0].json
    assert request["model"] == "test-model"
    assert "verify_webhook" in str(request["messages"])


def _quick_start() -> str:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    return next(part for part in readme.split("\n## ") if part.startswith("Quick start"))


@pytest.mark.parametrize(
    "step",
    [
        "`pip install` into any virtual environment",
        "szrag index ",
        "kept out of git",
        f'szrag ask "{QUESTION}"',
        "no key needed",
    ],
)
def test_the_readme_quick_start_says_what_the_test_does(step: str) -> None:
    assert step in _quick_start()
