"""Token counting for the context budget: the spec's estimate, or a real BPE encoding.

The estimate is the original's: one token per four characters, rounded up. An exact count
uses a tiktoken encoding when ``SZRAG_TOKENIZER`` names one. tiktoken downloads encoding
files on first use; with no network (or no tiktoken) loading gives up within a timeout and
the estimate is used instead, with a warning. A cached encoding file (``TIKTOKEN_CACHE_DIR``)
or an installed offline copy registered as ``<name>_offline`` is used without any network.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from szrag.base.errors import ConfigError
from szrag.base.memo import TextMemo

log = logging.getLogger(__name__)

TOKENIZER_SETTING = "SZRAG_TOKENIZER"
ESTIMATE_NAME = "estimate"
ENCODINGS = ("cl100k_base", "o200k_base")
TOKENIZERS = (ESTIMATE_NAME, *ENCODINGS)
CHARS_PER_TOKEN = 4
LOAD_TIMEOUT = 10.0  # seconds a first download may take before we settle for the estimate
MAX_REASON_LENGTH = 80


def estimate_token_count(text: str) -> int:
    """One token per four characters, rounded up (the spec's estimateTokenCount)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class TokenCounter:
    """A named way of counting tokens; ``note`` says why a fallback was used."""

    name: str
    count: Callable[[str], int]
    exact: bool = False
    note: str | None = None
    # counts a run of texts (all of them, in order) faster than one by one, if given
    count_run: Callable[[Iterable[str]], list[int]] | None = None
    # the least the count of a text can be, worked out far faster than the count, if known
    bound: Callable[[str], int] | None = None

    def __call__(self, text: str) -> int:
        return self.count(text)

    def at_least(self, text: str) -> int:
        """A number the count of ``text`` is never below (0 when nothing better is known)."""
        return self.bound(text) if self.bound is not None else 0

    def count_each(self, texts: Iterable[str]) -> list[int]:
        """The count of each of ``texts``, in order."""
        if self.count_run is not None:
            return self.count_run(texts)
        return [self.count(text) for text in texts]


ESTIMATE = TokenCounter(ESTIMATE_NAME, estimate_token_count, bound=estimate_token_count)

# characters str.split() takes for whitespace that the encodings' pre-tokenizers do not
_SPLIT_ONLY_SPACES = ("\x1c", "\x1d", "\x1e", "\x1f")


# an ASCII text's bytes as whitespace (what str.split() cuts at, but those above) or not
_RUN_SHAPE = bytes(0x20 if chr(code) in " \t\n\r\x0b\x0c" else 0x78 for code in range(256))


def words_bound(text: str, *, slashes_join: bool = False) -> int:
    """The runs of non-whitespace in ``text``: ``cl100k_base`` never counts fewer tokens.

    tiktoken's encodings first cut the text into pieces by a pattern, then encode each piece
    into one token or more. In ``cl100k_base`` a piece holds whitespace only at its start or
    end (a space before a word, newlines after punctuation), so no piece spans two runs.
    ``o200k_base`` lets punctuation take the newlines and slashes after it (``}\n//`` is one
    piece): with ``slashes_join`` a run of slashes alone is not counted."""
    if any(space in text for space in _SPLIT_ONLY_SPACES):
        return 0
    if not slashes_join and text.isascii():  # counted in its bytes, no run made a string
        shape = text.encode("ascii").translate(_RUN_SHAPE)
        return shape.count(b" x") + shape.startswith(b"x")
    runs = text.split()
    if slashes_join:
        return sum(1 for run in runs if run.strip("/"))
    return len(runs)


# the least count of a text under each encoding whose pattern the bound was worked out for
_BOUNDS: dict[str, Callable[[str], int]] = {
    "cl100k_base": words_bound,
    "o200k_base": functools.partial(words_bound, slashes_join=True),
}


class _EncodingUnavailable(Exception):
    """The encoding could not be loaded (no tiktoken, no network, bad data)."""


def _call_with_timeout(function: Callable[[], Any], timeout: float) -> Any:
    """``function()`` in a daemon thread; a call still running after ``timeout`` is abandoned.

    tiktoken's download has no timeout of its own, so a network that drops packets would
    otherwise hang the question. The abandoned thread cannot block interpreter exit.
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed back to the caller below
            outcome["error"] = error

    worker = threading.Thread(target=run, name="szrag-tokenizer-load", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise _EncodingUnavailable(f"loading took longer than {timeout:g}s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _load_encoding(name: str, timeout: float) -> Any:
    """The tiktoken encoding ``name``, preferring an installed offline copy."""
    try:
        import tiktoken
    except ImportError as error:
        raise _EncodingUnavailable("tiktoken is not installed") from error
    offline = f"{name}_offline"
    chosen = offline if offline in tiktoken.list_encoding_names() else name
    try:
        return _call_with_timeout(lambda: tiktoken.get_encoding(chosen), timeout)
    except _EncodingUnavailable:
        raise
    except Exception as error:  # network, hash mismatch, corrupt cache: all mean "not here"
        raise _EncodingUnavailable(_brief(error)) from error


def _brief(error: Exception) -> str:
    """The error's type and the start of its message: enough for a one-line warning."""
    message = str(error).splitlines()[0] if str(error) else ""
    if len(message) > MAX_REASON_LENGTH:
        message = message[: MAX_REASON_LENGTH - 3] + "..."
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


REMEMBERED_CHARS = 16_000_000


ENCODING_THREADS = 2


def encoding_counter(encoding: Any, name: str | None = None) -> TokenCounter:
    """An exact counter over a tiktoken ``Encoding`` (special-token text counts as text).

    Counts are remembered: the same chunks are counted for question after question in a
    long-running process. A run of texts is encoded in worker threads while the caller
    produces the next text: tiktoken lets go of the interpreter lock as it encodes, so a
    packer's redaction (Python) and its counting (Rust) share the cores."""
    from concurrent.futures import Future, ThreadPoolExecutor

    def encoded(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    remembered = TextMemo(encoded, max_chars=REMEMBERED_CHARS, size=lambda count: 0)

    def count_run(texts: Iterable[str]) -> list[int]:
        counts: list[int | Future[int]] = []
        # threads for this run only, started by its first text not yet remembered: none
        # outlive it (a process with threads would no longer fork its build's workers)
        pool: ThreadPoolExecutor | None = None
        try:
            for text in texts:
                known = remembered.known(text)
                if known is not None:
                    counts.append(known)
                    continue
                if pool is None:
                    pool = ThreadPoolExecutor(ENCODING_THREADS, thread_name_prefix="szrag-tokens")
                try:
                    counts.append(pool.submit(remembered, text))
                except RuntimeError:  # the interpreter is shutting down: counted here
                    counts.append(remembered(text))
            return [count if isinstance(count, int) else count.result() for count in counts]
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    return TokenCounter(
        name or str(encoding.name),
        remembered,
        exact=True,
        count_run=count_run,
        bound=_BOUNDS.get(name or str(encoding.name)),
    )


_LOADING = {name: threading.Lock() for name in ENCODINGS}


@functools.cache
def _counter_for(name: str, timeout: float) -> TokenCounter:
    if name == ESTIMATE_NAME:
        return ESTIMATE
    try:
        encoding = _load_encoding(name, timeout)
    except _EncodingUnavailable as error:
        note = f"{name} unavailable ({error}); using the 4-characters-per-token estimate"
        log.warning("tokenizer %s", note)
        return TokenCounter(ESTIMATE_NAME, estimate_token_count, note=note)
    return encoding_counter(encoding, name)


def configured_tokenizer(environ: Mapping[str, str]) -> str:
    """The tokenizer named by ``SZRAG_TOKENIZER`` (``estimate`` when unset)."""
    value = environ.get(TOKENIZER_SETTING, "").strip().lower()
    return value or ESTIMATE_NAME


def load_counter(name: str | None = None, *, timeout: float = LOAD_TIMEOUT) -> TokenCounter:
    """The counter for ``name`` (default: the estimate), loaded once per process.

    An unknown name is a configuration error; a known encoding that cannot be loaded falls
    back to the estimate with a warning, and the fallback is remembered so later calls do
    not wait again.
    """
    chosen = (name or ESTIMATE_NAME).strip().lower()
    if chosen not in TOKENIZERS:
        raise ConfigError(
            f"unknown tokenizer {chosen!r} ({TOKENIZER_SETTING}):"
            f" choose one of {', '.join(TOKENIZERS)}"
        )
    if chosen == ESTIMATE_NAME:
        return ESTIMATE
    with _LOADING[chosen]:  # a question arriving while a face loads it waits for that load
        return _counter_for(chosen, timeout)


def forget_counters() -> None:
    """Drop loaded counters, so the next load tries again (after a network or setting change)."""
    _counter_for.cache_clear()
