"""The one error tree: every szrag error has a stable code, an HTTP status and an exit code."""

from __future__ import annotations

import szrag
from szrag.base import errors
from szrag.server.service import error_status


def every_error_class() -> list[type[errors.SzragError]]:
    found: list[type[errors.SzragError]] = []
    pending: list[type[errors.SzragError]] = [errors.SzragError]
    while pending:
        kind = pending.pop()
        found.append(kind)
        pending.extend(kind.__subclasses__())
    return found


def test_every_error_lives_in_the_one_tree_with_a_code_and_a_status() -> None:
    classes = every_error_class()
    assert len(classes) >= 25
    for kind in classes:
        assert isinstance(kind.code, str) and kind.code, kind
        assert 400 <= kind.http_status < 600, kind
        assert kind.exit_code in (1, 2), kind
        defined_in = kind.__module__
        assert defined_in in ("szrag.base.errors", "szrag.server.errors"), (kind, defined_in)


def test_the_http_answer_comes_from_the_class() -> None:
    assert error_status(errors.QuestionError("empty")) == (400, "empty_question", "empty")
    assert error_status(errors.CommandNotAllowed("no")) == (403, "not_allowed", "no")
    assert error_status(errors.IndexStoreError("gone"))[:2] == (503, "index_unavailable")
    assert error_status(errors.ProviderTimeoutError("slow"))[:2] == (502, "timeout")
    assert error_status(ValueError("bug"))[:2] == (500, "internal_error")


def test_the_package_exports_the_tree_but_not_internal_names() -> None:
    for name in ("SzragError", "ConfigError", "ProviderError", "CommandError", "QuestionError"):
        assert getattr(szrag, name) is getattr(errors, name)
    assert "calculate_score" not in szrag.__all__
