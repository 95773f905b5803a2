"""A service's repositories: named from options or a service file, opened on first use, routed
to when a question names none, and their views kept within a memory budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from szrag.base.errors import RepositoryError, UnknownRepository
from szrag.index.shared import SharedIndex, open_shared_index
from szrag.service.repositories import (
    RepositorySpec,
    ServicePlan,
    plan_from_options,
    read_service_file,
    write_service_file,
)
from szrag.service.service import Service


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


COMMON = {  # what every small service has, so that no repository is a one-file corpus
    "src/config.py": 'def load_settings(path):\n    """Read the settings file."""\n'
    "    return parse_toml(path.read_text())\n",
    "src/logging.py": 'def setup_logging(level):\n    """Configure the root logger."""\n'
    "    return basic_config(level=level)\n",
    "tests/test_config.py": "def test_load_settings():\n    assert load_settings\n",
}


@pytest.fixture
def three(tmp_path: Path) -> dict[str, Path]:
    """Three small repositories, each the only one that knows its topic."""
    return {
        "mailer": make_repo(
            tmp_path / "mailer",
            {
                **COMMON,
                "src/welcome.py": "def send_welcome_email(user):\n"
                "    '''Send the welcome e-mail to a new user.'''\n"
                "    return smtp_deliver(user.email, template='welcome')\n",
                "README.md": "# Mailer\n\nSends every e-mail the product sends.\n",
            },
        ),
        "billing": make_repo(
            tmp_path / "billing",
            {
                **COMMON,
                "src/invoice.py": "def render_invoice(order):\n"
                "    '''Render an invoice with tax lines.'''\n"
                "    return pdf(order.lines, tax=vat_rate(order.country))\n",
            },
        ),
        "web": make_repo(
            tmp_path / "web",
            {
                **COMMON,
                "src/router.ts": "export function routeCheckout(cart: Cart) {\n"
                "  return navigate('/checkout', cart)\n}\n",
            },
        ),
    }


def test_options_name_repositories_and_refuse_what_cannot_be_used(
    three: dict[str, Path], tmp_path: Path
) -> None:
    plan = plan_from_options([f"{name}={path}" for name, path in three.items()])
    assert plan.names() == ["mailer", "billing", "web"]
    assert plan.named("web").path == three["web"].resolve()
    with pytest.raises(UnknownRepository, match="known: mailer, billing, web"):
        plan.named("mobile")
    for bad, message in [
        ("a/b=" + str(three["web"]), "cannot name a repository"),
        ("web", "NAME=PATH"),
        ("has space=" + str(three["web"]), "cannot name a repository"),
        ("gone=" + str(tmp_path / "missing"), "is not a folder"),
    ]:
        with pytest.raises(RepositoryError, match=message):
            plan_from_options([bad])
    with pytest.raises(RepositoryError, match="two repositories are called 'web'"):
        plan_from_options([f"web={three['web']}", f"web={three['mailer']}"])


def test_a_service_file_lists_local_and_remote_repositories(tmp_path: Path) -> None:
    make_repo(tmp_path / "code/api", {"app.py": "x = 1\n"})
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(
        "memory_mb = 64\n\n"
        '[[repositories]]\nname = "api"\npath = "code/api"\nslack_channels = ["C01"]\n\n'
        '[[repositories]]\nname = "web"\nurl = "file:///srv/web.git"\nbranch = "main"\n',
        encoding="utf-8",
    )
    plan = read_service_file(service_file)
    assert plan.memory_mb == 64 and plan.names() == ["api", "web"]
    api, web = plan.repositories
    assert api.path == (tmp_path / "code/api").resolve() and not api.remote
    assert web.remote and web.url == "file:///srv/web.git" and web.branch == "main"
    assert web.path == tmp_path.resolve() / ".szrag/repositories/web"
    assert plan.for_channel("C01") == api and plan.for_channel("C99") is None

    # written back as it was read
    again = tmp_path / "again" / "szrag.toml"
    again.parent.mkdir()
    write_service_file(plan, again)
    reread = read_service_file(again)
    assert [
        (spec.name, spec.url, spec.branch, spec.slack_channels) for spec in reread.repositories
    ] == [(spec.name, spec.url, spec.branch, spec.slack_channels) for spec in plan.repositories]
    assert reread.repositories[0].path == api.path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[repositories]]\npath = 'x'\n", "give it a name"),
        ("[[repositories]]\nname = 'a'\n", "give either path or url"),
        ("[[repositories]]\nname = 'a'\npath = '.'\nurl = 'u'\n", "give either path or url"),
        (
            "[[repositories]]\nname = 'a'\npath = '.'\nbranch = 'main'\n",
            "branch is the branch of a url",
        ),
        ("[[repositories]]\nname = 'a'\npath = '.'\ncolour = 'red'\n", "unknown key"),
        ("[[repositories]]\nname = 'a b'\npath = '.'\n", "cannot name a repository"),
        ("memory_mb = 'lots'\n", "memory_mb"),
        ("[[repositories\n", "not valid TOML"),
    ],
)
def test_a_bad_service_file_says_which_entry_is_wrong(
    tmp_path: Path, text: str, message: str
) -> None:
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(text, encoding="utf-8")
    with pytest.raises(RepositoryError, match=message) as raised:
        read_service_file(service_file)
    assert str(service_file) in raised.value.message


def test_repositories_open_on_first_use_and_unscoped_questions_find_their_repository(
    three: dict[str, Path],
) -> None:
    opened: list[Path] = []

    def opener(root: Path) -> SharedIndex:
        opened.append(root)
        return open_shared_index(root)

    service = Service(plan_from_options([f"{n}={p}" for n, p in three.items()]), {}, opener=opener)
    try:
        assert opened == [] and service.states["mailer"].state == "pending"
        host = service.host("billing")
        assert host.index is not None and host.root == three["billing"].resolve()
        assert service.host("billing") is host and len(opened) == 1
        assert service.states["billing"].state == "ready" and service.states["billing"].files == 4

        routed = service.route("which service sends the welcome e-mail?")
        assert routed.repository == "mailer"
        assert routed.sources[0].path == "src/welcome.py"
        assert routed.scores[0][0] == "mailer"
        assert service.route("how is the invoice tax rendered").repository == "billing"
        assert service.route("routeCheckout navigate").repository == "web"
        with pytest.raises(UnknownRepository):
            service.host("mobile")
    finally:
        service.close()


def test_the_memory_budget_keeps_the_views_of_the_repositories_asked_last(
    three: dict[str, Path],
) -> None:
    # each repository's views are estimated at 8 MiB and more: 20 MiB holds two of them
    plan = plan_from_options([f"{n}={p}" for n, p in three.items()], memory_mb=20)
    service = Service(plan, {})
    try:
        for name in ("mailer", "billing", "web"):
            host = service.host(name)
            assert host.index is not None
            host.index.derived("test.view", lambda: object())  # a view kept in memory
        assert service.loaded() == ["billing", "web"]  # mailer, asked first, was dropped
        assert service.opened() == ["mailer", "billing", "web"]  # its index stays open
        mailer = service.host("mailer").index
        assert mailer is not None
        marker = object()
        assert mailer.derived("test.view", lambda: marker) is marker  # built again
        assert service.loaded() == ["web", "mailer"]
        assert service.states["billing"].loaded is False and service.states["web"].loaded
    finally:
        service.close()


def test_a_repository_that_cannot_be_opened_fails_alone(three: dict[str, Path]) -> None:
    def opener(root: Path) -> SharedIndex:
        if root.name == "billing":
            raise OSError("disk on fire")
        return open_shared_index(root)

    service = Service(plan_from_options([f"{n}={p}" for n, p in three.items()]), {}, opener=opener)
    try:
        with pytest.raises(RepositoryError, match="disk on fire"):
            service.host("billing")
        assert service.states["billing"].state == "failed"
        assert service.states["billing"].error == "disk on fire"
        assert service.route("welcome e-mail").repository == "mailer"  # the others still serve
    finally:
        service.close()


def test_a_service_needs_a_repository() -> None:
    with pytest.raises(RepositoryError, match="at least one"):
        Service(ServicePlan(()), {})


def test_a_spec_is_a_name_and_a_folder(tmp_path: Path) -> None:
    spec = RepositorySpec.parse("api=.", base=tmp_path)
    assert spec == RepositorySpec("api", tmp_path.resolve())


def test_the_memory_budget_is_configured_by_the_environment() -> None:
    from szrag.base.errors import ConfigError
    from szrag.base.settings import ServerSettings

    assert ServerSettings.from_env({}).memory_mb is None  # the service file's, or 1024
    assert ServerSettings.from_env({"SZRAG_MEMORY_MB": "64"}).memory_mb == 64
    with pytest.raises(ConfigError, match="SZRAG_MEMORY_MB"):
        ServerSettings.from_env({"SZRAG_MEMORY_MB": "lots"})


def test_a_repository_whose_folder_appears_later_is_read_with_the_services_environment(
    three: dict[str, Path], tmp_path: Path
) -> None:
    later = tmp_path / "later"
    plan = ServicePlan(
        (RepositorySpec("mailer", three["mailer"]), RepositorySpec("later", later.resolve()))
    )
    service = Service(plan, {"SZRAG_CONTEXT_BUDGET": "700"})
    try:
        assert "later" not in service.configs  # no folder yet: read when first opened
        make_repo(later, {"src/app.py": "def run():\n    return 1\n"})
        assert service.host("later").plan().budget == 700
        assert service.host("mailer").plan().budget == 700
    finally:
        service.close()
