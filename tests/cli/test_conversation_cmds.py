"""``szrag ask --continue``, ``szrag chat`` and ``szrag feedback``, through click, with the
scripted provider on 127.0.0.1 answering and the real index and conversation store."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from szrag.cli import main
from szrag.conversations import ConversationStore
from szrag.llm.testing import ScriptedProvider, text_reply

FIRST = "How does the webhook deploy work?"
FOLLOW_UP = "and where is that verified?"


@pytest.fixture
def provider(
    provider_server: tuple[ScriptedProvider, str], monkeypatch: pytest.MonkeyPatch
) -> ScriptedProvider:
    """The shared provider, configured through the environment as a user would."""
    app, base_url = provider_server
    app.reset()
    monkeypatch.setenv("AI_URL", base_url)
    monkeypatch.setenv("AI_API_KEY", "test-key")
    monkeypatch.setenv("AI_MODEL", "test-model")
    monkeypatch.setenv("SZRAG_AI_RETRIES", "0")
    monkeypatch.setenv("SZRAG_TOOLS", "0")
    return app


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def ask_json(root: Path, *args: str) -> dict[str, Any]:
    code, out, err = run("ask", *args, "--root", str(root), "--json")
    assert code == 0, err
    value: dict[str, Any] = json.loads(out)
    return value


def test_the_new_commands_have_help_text() -> None:
    for args in (["chat"], ["feedback"], ["feedback", "give"], ["feedback", "export"]):
        code, out, _ = run(*args, "--help")
        assert code == 0 and "Usage:" in out, args
    code, out, _ = run("ask", "--help")
    assert "--continue" in out and "--conversation" in out
    code, out, err = run("feedback")  # no arguments: the help, with its three commands
    assert all(name in out + err for name in ("give", "list", "export"))


def test_ask_shows_the_answer_id_and_continue_follows_up(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    provider.script(text_reply("Deploys start in server/webhook.js."), text_reply("Right there."))

    code, out, err = run("ask", FIRST, "--root", str(retrieval_repo))
    assert code == 0, err
    (answer_id,) = re.findall(r"answer ([0-9a-f]{16}) \(rate it: szrag feedback \1 up\|down\)", out)
    follow = ask_json(retrieval_repo, "--continue", FOLLOW_UP)

    store = ConversationStore.for_root(retrieval_repo)
    turns = store.turns(follow["conversationId"])
    assert [turn.answer_id for turn in turns] == [answer_id, follow["answerId"]]
    sent = provider.requests[1].json["messages"]
    assert [message["role"] for message in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == FIRST


def test_continue_without_an_earlier_conversation_starts_one(retrieval_repo: Path) -> None:
    code, out, err = run("ask", "--continue", "--no-ai", FIRST, "--root", str(retrieval_repo))

    assert code == 0 and "no earlier conversation to continue" in err
    assert re.search(r"answer [0-9a-f]{16}", out)


def test_a_given_conversation_is_continued_and_an_unknown_one_refused(
    retrieval_repo: Path,
) -> None:
    first = ask_json(retrieval_repo, "--no-ai", FIRST)
    other = ask_json(retrieval_repo, "--no-ai", "Where is the scheduler configured?")

    followed = ask_json(
        retrieval_repo, "--no-ai", "--conversation", first["conversationId"], FOLLOW_UP
    )
    code, _, err = run(
        "ask", "--no-ai", "--conversation", "0123456789abcdef", FIRST, "--root", str(retrieval_repo)
    )
    both = run("ask", "--continue", "--conversation", "x", FIRST, "--root", str(retrieval_repo))

    assert followed["conversationId"] == first["conversationId"] != other["conversationId"]
    assert followed["sources"][0]["path"] == "server/webhook.js"  # searched with the first
    assert code == 2 and "no conversation 0123456789abcdef" in err
    assert both[0] == 2 and "not both" in both[2]


def test_chat_answers_each_line_in_one_conversation_until_an_empty_line(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    provider.script(text_reply("In server/webhook.js."), text_reply("Verified in the same file."))
    stdin = f"{FIRST}\n{FOLLOW_UP}\n\nnever asked\n"

    code, out, err = run("chat", "--root", str(retrieval_repo), stdin=stdin)

    assert code == 0, err
    assert "In server/webhook.js." in out and "Verified in the same file." in out
    assert out.count("> ") >= 3 and "never asked" not in json.dumps(
        [request.json for request in provider.requests]
    )
    assert len(provider.requests) == 2
    assert [message["role"] for message in provider.requests[1].json["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]
    (conversation,) = re.findall(r"conversation ([0-9a-f]{16}): `szrag chat --continue`", err)
    assert len(ConversationStore.for_root(retrieval_repo).turns(conversation)) == 2


@pytest.mark.parametrize("ending", ["/exit\n", ""])
def test_chat_ends_at_exit_or_end_of_input_and_a_bad_line_does_not_end_it(
    retrieval_repo: Path, ending: str
) -> None:
    stdin = f"{'x' * 9000}\n{FIRST}\n{ending}"

    code, out, err = run("chat", "--no-ai", "--root", str(retrieval_repo), stdin=stdin)

    assert code == 0, err
    assert "the question is 9000 characters long" in err
    assert "Most relevant repository sources" in out
    assert len(re.findall(r"answer [0-9a-f]{16}", out)) == 1


def test_chat_continue_picks_up_the_last_conversation(retrieval_repo: Path) -> None:
    first = ask_json(retrieval_repo, "--no-ai", FIRST)

    code, out, err = run(
        "chat", "--no-ai", "--continue", "--root", str(retrieval_repo), stdin=f"{FOLLOW_UP}\n"
    )

    assert code == 0, err
    assert "Most relevant repository sources" in out
    assert f"continuing conversation {first['conversationId']} (1 earlier turns kept)" in err
    assert len(ConversationStore.for_root(retrieval_repo).turns(first["conversationId"])) == 2


def test_feedback_is_given_listed_and_checked_against_the_index(retrieval_repo: Path) -> None:
    answer = ask_json(retrieval_repo, "--no-ai", "how is a request authenticated?")
    root = ("--root", str(retrieval_repo))

    near = run("feedback", answer["answerId"], "down", "--right-file", "auth.js", *root)
    unknown = run("feedback", "feedfeedfeedfeed", "up", *root)
    bad = run("feedback", answer["answerId"], "sideways", *root)
    code, out, err = run(
        "feedback", answer["answerId"], "DOWN", "--right-file", "server/auth.js", "--comment",
        "auth lives here", *root,
    )  # fmt: skip
    listed = run("feedback", "list", *root, "--json")

    assert near[0] == 2 and "did you mean server/auth.js?" in near[2]
    assert unknown[0] == 2 and "no answer feedfeedfeedfeed" in unknown[2]
    assert bad[0] == 2 and "sideways" in bad[2]
    assert code == 0, err
    assert f"kept: down for answer {answer['answerId']}" in out and "server/auth.js" in out
    (record,) = json.loads(listed[1])
    assert record["rightFiles"] == ["server/auth.js"] and record["comment"] == "auth lives here"
    assert record["question"] == "how is a request authenticated?"
    table = run("feedback", "list", *root)[1]
    assert answer["answerId"] in table and "server/auth.js" in table


def git(root: Path, *arguments: str) -> str:
    completed = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com",
         *arguments],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return completed.stdout.strip()


@pytest.mark.parametrize("pin", [False, True])
def test_exported_feedback_runs_through_szrag_eval(
    retrieval_repo: Path, provider: ScriptedProvider, tmp_path: Path, pin: bool
) -> None:
    """Answers from the real index and a scripted model, feedback on them, the export, and
    ``szrag eval`` over the cases it wrote."""
    git(retrieval_repo, "init", "-q")
    git(retrieval_repo, "add", "-A")
    git(retrieval_repo, "commit", "-qm", "init")
    head = git(retrieval_repo, "rev-parse", "HEAD")
    root = ("--root", str(retrieval_repo))
    provider.script(
        text_reply("Signatures are checked in server/webhook.js:1-25."),
        text_reply("See docs/security.md."),
        text_reply("No idea."),
    )
    cited = ask_json(retrieval_repo, "How is the GitHub webhook signature verified?")
    wrong = ask_json(retrieval_repo, "Where are sessions checked before a request runs?")
    vague = ask_json(retrieval_repo, "What happens at midnight?")
    assert run("feedback", cited["answerId"], "up", *root)[0] == 0
    assert (
        run("feedback", wrong["answerId"], "down", "--right-file", "server/auth.js", *root)[0] == 0
    )
    assert run("feedback", vague["answerId"], "down", *root)[0] == 0
    cases_file = tmp_path / "eval" / "feedback.jsonl"

    code, out, err = run(
        "feedback", "export", "--out", str(cases_file), *root, *(["--pin"] if pin else [])
    )
    cases = [json.loads(line) for line in cases_file.read_text().splitlines()]
    evaluated = run("eval", str(cases_file), "--json")

    assert code == 0 and out == "" and "2 case(s) to" in err and "1 down rating" in err
    assert [(case["question"], case["files"], case["rating"]) for case in cases] == [
        ("How is the GitHub webhook signature verified?", ["server/webhook.js"], "up"),
        ("Where are sessions checked before a request runs?", ["server/auth.js"], "down"),
    ]
    assert {case["root"] for case in cases} == {"../retrieval_repo"}
    assert {case["commit"] for case in cases} == {head}
    assert all(("revision" in case) is pin for case in cases)
    assert {(case["class"], case["dataset"]) for case in cases} == {("feedback", "feedback")}
    assert evaluated[0] == 0, evaluated[2]
    report = json.loads(evaluated[1])
    assert report["overall"]["cases"] == 2
    assert report["perClass"]["feedback"]["cases"] == 2
    assert report["overall"]["hit@k"] == 1.0 and report["failures"] == []
    assert git(retrieval_repo, "rev-parse", "HEAD") == head


def test_export_to_standard_output_names_the_root_in_full(retrieval_repo: Path) -> None:
    answer = ask_json(retrieval_repo, "--no-ai", FIRST)
    run("feedback", answer["answerId"], "up", "--root", str(retrieval_repo))

    code, out, err = run("feedback", "export", "--root", str(retrieval_repo))

    (case,) = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and "1 case(s)" in err
    assert case["root"] == retrieval_repo.resolve().as_posix()
    assert case["files"] == list(dict.fromkeys(source["path"] for source in answer["sources"]))


async def test_a_service_files_feedback_is_listed_and_exported_with_its_repository(
    tmp_path: Path,
) -> None:
    from szrag.answer import Question
    from szrag.service.feedback import give_feedback
    from szrag.service.repositories import read_service_file
    from szrag.service.service import Service

    for name, text in (("mailer", "def send_welcome_email(user): ..."), ("web", "x = 1")):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "src" / "main.py").write_text(text + "\n", encoding="utf-8")
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(
        '[[repositories]]\nname = "mailer"\npath = "mailer"\n\n'
        '[[repositories]]\nname = "web"\npath = "web"\n',
        encoding="utf-8",
    )
    service = Service(read_service_file(service_file), {})
    try:
        host = service.host("web")
        answer = await host.ask(Question("where is x set?", with_ai=False, remember=True))
        assert answer.answer_id is not None
        give_feedback(host, answer.answer_id, "up", right_files=["src/main.py"])
    finally:
        service.close()

    code, out, _ = run("feedback", "list", "--config", str(service_file), "--json")
    assert code == 0
    assert [(item["repository"], item["rightFiles"]) for item in json.loads(out)] == [
        ("web", ["src/main.py"])
    ]
    cases_file = tmp_path / "eval" / "cases.jsonl"
    code, _, err = run(
        "feedback", "export", "--config", str(service_file), "--out", str(cases_file)
    )
    assert code == 0 and "1 case(s)" in err
    (case,) = [json.loads(line) for line in cases_file.read_text().splitlines()]
    assert (case["repository"], case["root"], case["files"]) == ("web", "../web", ["src/main.py"])
    # the repository's own store (szrag feedback --root) holds none of the service's
    code, out, _ = run("feedback", "list", "--root", str(tmp_path / "web"), "--json")
    assert code == 0 and json.loads(out) == []
