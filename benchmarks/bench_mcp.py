"""``search_code`` over MCP (warm, one long-running ``szrag mcp`` process) beside the CLI
one-shot (``szrag retrieve``: process start to printed result), on the mixed corpus.

Both read a current index. The MCP figure is a full round trip through the SDK's client over
stdio (JSON-RPC framing, schema check, retrieval in a worker thread, redaction, JSON); the
one-shot figure pays for the interpreter, the imports and the freshness check every time.

    python benchmarks/bench_mcp.py [--rounds 3] [--transcript] [--root DIR]

``--transcript`` prints a client session instead: the tools listed, then a call of each kind
with the start of its result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client, StdioServerParameters

from benchmarks.mixed_corpus import DEFAULT_MIRRORS, WORK, build

QUESTIONS = (
    "how does pytest collect test modules from a directory",
    "where are redirects followed when sending a request",
    "how are route parameters parsed in the router",
    "how is the search index written for the html builder",
    "how are command line options parsed into parameters",
)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _server(root: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "szrag", "mcp", "--root", str(root), "--no-watch"]
    )


def one_shot(root: Path, question: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "szrag", "retrieve", "--root", str(root), "--json", question],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


async def warm_search(root: Path, rounds: int) -> tuple[float, list[float]]:
    started = time.perf_counter()
    async with Client(_server(root)) as client:
        ready = time.perf_counter() - started
        # warm: the server builds the shared views in a thread as it starts; a context for
        # each question waits for them, then every question is asked once
        for question in QUESTIONS:
            await client.call_tool("get_context", {"question": question})
            await client.call_tool("search_code", {"question": question})
        timings: list[float] = []
        for _ in range(rounds):
            for question in QUESTIONS:
                began = time.perf_counter()
                result = await client.call_tool("search_code", {"question": question})
                timings.append(time.perf_counter() - began)
                assert not result.is_error, result
    return ready, timings


def _short(value: Any, width: int = 220) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


async def transcript(root: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_code", {"question": QUESTIONS[1], "limit": 3}),
        ("get_context", {"question": QUESTIONS[1], "budget": 1500}),
        ("find_symbols", {"query": "resolve_redirects"}),
        ("find_routes", {"query": "GET /users/:id", "limit": 3}),
        ("get_dependencies", {"path": "requests/src/requests/sessions.py"}),
        ("get_dependants", {"path": "requests/src/requests/sessions.py"}),
        ("find_environment_variable", {"name": "REQUESTS_CA_BUNDLE"}),
        ("getStatus", {}),
        ("getRoutes", {"route": "/api", "limit": 3}),
        ("runCommand", {"commandId": "hash", "text": "sha256 hello"}),
        ("runCommand", {"commandId": "uuid"}),
        ("search_code", {"question": 42}),
    ]
    async with Client(_server(root)) as client:
        info = client.server_info
        print(f"> connect: {info.name if info else '?'} {info.version if info else ''}")
        tools = (await client.list_tools()).tools
        print(f"> tools/list: {len(tools)} tools: {', '.join(tool.name for tool in tools)}")
        for name, args in calls:
            began = time.perf_counter()
            result = await client.call_tool(name, args)
            elapsed = (time.perf_counter() - began) * 1000
            flag = " (error)" if result.is_error else ""
            print(f"> tools/call {name} {json.dumps(args)}  [{elapsed:.0f} ms]{flag}")
            print(f"  {_short(result.structured_content)}")
        page = await client.list_resources()
        print(
            f"> resources/list: {len(page.resources)} on the first page, first {page.resources[0].uri}"
        )
        prompt = await client.get_prompt("answer_about_repository", {"question": QUESTIONS[1]})
        print(f"> prompts/get answer_about_repository: {len(prompt.messages)} messages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--transcript", action="store_true")
    args = parser.parse_args()
    root = args.root or build(WORK / "mixed", args.mirrors)
    subprocess.run(
        [sys.executable, "-m", "szrag", "index", "--root", str(root)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if args.transcript:
        asyncio.run(transcript(root))
        return
    shots = [one_shot(root, question) for _ in range(args.rounds) for question in QUESTIONS]
    ready, warm = asyncio.run(warm_search(root, args.rounds))
    files = sum(1 for _ in root.rglob("*") if not {".git", ".rag"} & set(_.parts) and _.is_file())
    print(f"corpus: {root} ({files} files)")
    print(f"{'figure':44} {'median':>9} {'p95':>9}")
    print(
        f"{'CLI one-shot retrieve (process to result)':44} {statistics.median(shots) * 1000:7.0f}ms"
        f" {_percentile(shots, 0.95) * 1000:7.0f}ms"
    )
    print(
        f"{'MCP search_code, warm (client round trip)':44} {statistics.median(warm) * 1000:7.1f}ms"
        f" {_percentile(warm, 0.95) * 1000:7.1f}ms"
    )
    print(f"{'MCP session start (spawn to ready)':44} {ready * 1000:7.0f}ms")


if __name__ == "__main__":
    main()
