"""Server latency and throughput on a generated repository, over real HTTP on 127.0.0.1.

Prints: time to the first ``activity`` event and to the first ``token`` event of a streamed
``POST /api/ask`` (a local scripted provider answers at once, so the figures are szrag's own
overhead: retrieval, context, the model request and the event stream), and requests per
second for ``/api/ask`` with the model off, in JSON mode, at a few concurrency levels.

The szrag server runs in its own process (uvicorn, one worker); the provider and the load
generator run in this one.

    python benchmarks/bench_server.py [--files 2000] [--asks 30] [--requests 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate_repo import WORDS, Zipf, generate, vocabulary
from szrag.index import build_index
from szrag.llm.testing import ScriptedProvider, serve, text_reply

WORK = Path(__file__).parent / ".work"
ANSWER = "The handler reads the configuration, then validates each entry. " * 6

SERVER_SCRIPT = """
import sys, uvicorn
from szrag.server import RateLimit, ServerSettings, create_app
watch = len(sys.argv) > 3 and sys.argv[3] == "watch"
settings = ServerSettings(watch=watch, ask_rate=RateLimit(0, 0), read_rate=RateLimit(0, 0))
app = create_app(sys.argv[1], settings=settings)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


@contextmanager
def szrag_server(
    root: Path,
    provider_url: str,
    *,
    environ: Mapping[str, str] | None = None,
    start_timeout: float = 120,
    watch: bool = False,
) -> Iterator[str]:
    """``szrag`` in a subprocess (with ``environ``, default this process's) pointed at
    ``provider_url``, its file watcher on with ``watch``; yields its base URL."""
    port = _free_port()
    env = {**(os.environ if environ is None else environ), "AI_URL": provider_url}
    env.update(AI_API_KEY="bench", AI_MODEL="bench", SZRAG_AUDIT_LOG="off")
    command = [sys.executable, "-c", SERVER_SCRIPT, str(root), str(port)]
    process = subprocess.Popen([*command, "watch"] if watch else command, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the szrag server did not start")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def time_to_first_events(base: str, provider: ScriptedProvider, questions: list[str]) -> None:
    first_activity: list[float] = []
    first_token: list[float] = []
    total: list[float] = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for question in questions:
            provider.script(text_reply(ANSWER, pieces=12))
            started = time.perf_counter()
            activity = token = None
            with client.stream(
                "POST",
                "/api/ask",
                json={"question": question},
                headers={"Accept": "text/event-stream"},
            ) as response:
                for line in response.iter_lines():
                    now = time.perf_counter() - started
                    if line == "event: activity" and activity is None:
                        activity = now
                    elif line == "event: token" and token is None:
                        token = now
            if activity is None or token is None:
                raise RuntimeError("the stream had no activity or no token")
            first_activity.append(activity)
            first_token.append(token)
            total.append(time.perf_counter() - started)
    for name, values in (
        ("first activity", first_activity),
        ("first token", first_token),
        ("whole answer", total),
    ):
        print(
            f"  {name:15s} median {statistics.median(values) * 1000:7.1f} ms"
            f"   p95 {_percentile(values, 0.95) * 1000:7.1f} ms"
        )


async def _throughput(base: str, questions: list[str], requests: int, concurrency: int) -> float:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for number in range(requests):
        queue.put_nowait(questions[number % len(questions)])
    failures = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal failures
        while not queue.empty():
            question = queue.get_nowait()
            response = await client.post("/api/ask", json={"question": question, "withAi": False})
            failures += response.status_code != 200

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        await client.post("/api/ask", json={"question": questions[0], "withAi": False})  # warm-up
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{failures} requests failed")
    return requests / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, help="an existing repository (default: generated)")
    parser.add_argument("--files", type=int, default=2000, help="files of the generated repository")
    parser.add_argument("--asks", type=int, default=30, help="streamed questions to time")
    parser.add_argument("--requests", type=int, default=300, help="requests per throughput run")
    args = parser.parse_args()

    root = args.root
    if root is None:
        root = WORK / f"server-repo-{args.files}"
        if root.exists():
            shutil.rmtree(root)
        generate(root, args.files, 120, vocabulary_size=3000)
    started = time.perf_counter()
    with build_index(root) as index:
        counts = index.counts()
    print(
        f"repository {root}: {counts['files']} files, {counts['chunks']} chunks "
        f"(indexed in {time.perf_counter() - started:.1f}s)"
    )

    rng = random.Random(7)
    words = Zipf(vocabulary(3000), rng)
    questions = [f"how does the {words.choice()} {rng.choice(WORDS)} work?" for _ in range(50)]

    provider = ScriptedProvider()
    with serve(provider) as provider_url, szrag_server(root, provider_url) as base:
        print(f"streamed /api/ask with a local provider ({args.asks} questions):")
        time_to_first_events(base, provider, questions[: args.asks])
        print(f"/api/ask with the model off, JSON ({args.requests} requests per run):")
        for concurrency in (1, 4, 16):
            rate = asyncio.run(_throughput(base, questions, args.requests, concurrency))
            print(f"  concurrency {concurrency:2d}: {rate:7.1f} requests/s")


if __name__ == "__main__":
    main()
