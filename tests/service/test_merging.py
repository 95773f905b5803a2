"""A question without a repository searched in every repository: each repository's files put
on one scale (``service/merging.py``) and merged, the question going to the best file's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.base.errors import QuestionError
from szrag.base.public import to_public
from szrag.rank.retrieve import Source, retrieve
from szrag.service.merging import (
    Searched,
    TermCounts,
    likelihood_weight,
    merge,
    shared_weight,
)
from szrag.service.repositories import plan_from_options
from szrag.service.service import Service

WriteFolders = Callable[[dict[str, dict[str, str]]], dict[str, Path]]


def source(path: str, score: int) -> Source:
    return Source(path, 1, 3, "code", None, f"text of {path}", score)


@pytest.mark.parametrize(
    ("own", "every", "expected"),
    [
        # the term in half the repository's chunks but a tenth of all: it weighs more overall
        (TermCounts(10, {"email": 5}), TermCounts(100, {"email": 10}), 1.0),
        # rare here (1 of 100), common overall: what it scores here is worth less
        (TermCounts(100, {"email": 1}), TermCounts(200, {"email": 100}), 1.0),
        # a repository holding none of the terms keeps its scores
        (TermCounts(50, {"email": 0}), TermCounts(100, {"email": 10}), 1.0),
    ],
)
def test_the_shared_weight_compares_a_term_across_repositories(
    own: TermCounts, every: TermCounts, expected: float
) -> None:
    weight = shared_weight(["email"], own, every)
    if own.frequencies["email"] == 0:
        assert weight == expected
    elif own.frequencies["email"] / own.chunks > every.frequencies["email"] / every.chunks:
        assert weight > expected  # common here, rarer overall
    else:
        assert weight < expected  # rare here, common overall


def test_the_likelihood_weight_is_one_for_the_likeliest_and_less_for_the_others() -> None:
    assert likelihood_weight(-10.0, -10.0, 4) == 1.0
    assert 0 < likelihood_weight(-14.0, -10.0, 4) < likelihood_weight(-12.0, -10.0, 4) < 1.0
    assert likelihood_weight(-14.0, -10.0, 0) == likelihood_weight(-14.0, -10.0, 1)  # no words


def test_merging_keeps_each_repository_s_order_and_names_its_repository() -> None:
    terms = ["invoice"]
    counts = TermCounts(10, {"invoice": 2})
    searched = [
        Searched("billing", counts, (source("a.py", 50), source("a.py", 50), source("b.py", 30))),
        Searched("web", counts, (source("c.py", 40),)),
    ]
    merged = merge(terms, searched, 2)
    # equal counts: equal factors, so the raw scores decide; a file's units stay together
    assert [(item.repository, item.source.path) for item in merged] == [
        ("billing", "a.py"),
        ("billing", "a.py"),
        ("web", "c.py"),
    ]
    assert merged[0].shared_score / 50 == pytest.approx(merged[-1].shared_score / 40)
    shown = to_public(merged[-1])
    assert shown["repository"] == "web" and shown["path"] == "c.py" and shown["score"] == 40
    assert shown["sharedScore"] == merged[-1].shared_score
    assert merge(terms, [], 8) == []


MAILER_FILES = {  # a repository about e-mail: "email" in every file, so it weighs little here
    f"src/mail_{name}.py": f"def {name}_email(user):\n"
    f"    '''Send the {name} email to the user.'''\n"
    f"    return deliver_email(user.email, template='{name}')\n"
    for name in ("welcome", "reset", "digest", "receipt", "reminder", "farewell")
} | {
    f"src/{name}.py": f"def {name}(queue):\n"
    f"    '''The {name} step of the outgoing queue.'''\n"
    f"    return queue.{name}(retries=3)\n"
    for name in ("schedule", "retry", "throttle", "bounce", "archive", "metrics", "health")
}
BILLING_FILES = {  # a repository about invoices that mentions e-mail once: there it is rare
    f"src/{name}.py": f"def {name}(order):\n"
    f"    '''The {name} of an order's invoice with its tax lines.'''\n"
    f"    return total(order.lines, tax=vat_rate(order.country))\n"
    for name in ("render", "tax", "refund", "discount", "currency", "ledger", "export")
} | {
    "src/notify.py": "def notify(order):\n"
    "    '''Tell the customer by email that the invoice is ready.'''\n"
    "    return queue(order.customer, 'invoice ready email')\n",
}


def test_a_word_common_in_one_repository_and_rare_in_another_goes_to_the_one_about_it(
    write_folders: WriteFolders,
) -> None:
    folders = write_folders({"billing": BILLING_FILES, "mailer": MAILER_FILES})
    service = Service(plan_from_options([f"{n}={p}" for n, p in folders.items()]), {})
    question = "email the user"
    try:
        own = {name: retrieve(question, 8, index=service.host(name).index) for name in folders}
        routed = service.route(question)
        welcome = service.route("send the welcome email")
    finally:
        service.close()
    # by their own scales, billing's one mention outscores every e-mail of the mailer
    assert own["billing"][0].path == "src/notify.py"
    assert own["billing"][0].score > 2 * own["mailer"][0].score
    assert routed.repository == "mailer" and routed.likeliest == "mailer"
    assert routed.merged[0].repository == "mailer"
    assert routed.merged[0].source.path.startswith("src/mail_")
    assert routed.sources == tuple(own["mailer"])  # the scoped retrieval, unchanged
    assert [name for name, _ in routed.scores] == ["mailer", "billing"]
    assert welcome.repository == "mailer" and welcome.sources[0].path == "src/mail_welcome.py"


def test_an_unscoped_search_merges_the_files_of_several_repositories(
    write_folders: WriteFolders,
) -> None:
    folders = write_folders({"billing": BILLING_FILES, "mailer": MAILER_FILES})
    service = Service(plan_from_options([f"{n}={p}" for n, p in folders.items()]), {})
    try:
        routed = service.route("refund invoice reminder email", limit=4)
        with pytest.raises(QuestionError):
            service.route("   ")
    finally:
        service.close()
    repositories = {item.repository for item in routed.merged}
    assert repositories == {"billing", "mailer"}
    files = list(dict.fromkeys((item.repository, item.source.path) for item in routed.merged))
    assert len(files) == 4
    assert files[:2] == [("mailer", "src/mail_reminder.py"), ("billing", "src/refund.py")]
    scores = [item.shared_score for item in routed.merged]
    assert scores == sorted(scores, reverse=True)


def test_an_unscoped_search_builds_no_dropped_views_again(write_folders: WriteFolders) -> None:
    folders = write_folders(
        {"billing": BILLING_FILES, "mailer": MAILER_FILES, "web": {"app.js": "route('/a')\n"}}
    )
    # each repository's views are estimated at 8 MiB and more: 20 MiB holds two of them
    plan = plan_from_options([f"{n}={p}" for n, p in folders.items()], memory_mb=20)
    service = Service(plan, {})
    try:
        for name in ("billing", "mailer", "web"):
            service.host(name)
        assert service.loaded() == ["mailer", "web"]
        billing = service.shared_index("billing")
        assert not billing.in_memory  # read from its store until asked again
        routed = service.route("invoice tax lines")
        assert routed.repository == "billing"
        assert service.loaded() == ["mailer", "web"] and not billing.in_memory
        service.host("billing")  # asked: its views come back, another's go
        assert billing.in_memory and service.loaded() == ["web", "billing"]
    finally:
        service.close()
