"""A bounded soak of the server on 127.0.0.1: does it hold its resources and stay responsive?

Runs a szrag server in a subprocess on a generated repository (with one minified bundle of
most of a megabyte, the kind of file that used to stall the event loop), then

1. N burst-then-idle cycles: a burst of concurrent asks (model off) and monitoring reads
   (``/healthz``, ``/api/status``), then an idle pause longer than the worker threads' idle
   timeout, printing after each cycle the server's open file
   descriptors on ``index.db``, all its descriptors and its RSS;
2. ``/healthz`` latency while a number of asks run at once.

It stops by itself and touches nothing outside its work directory.

    python benchmarks/soak_server.py [--cycles 6] [--burst 20] [--idle 12] [--concurrent 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_server import _percentile, szrag_server
from benchmarks.generate_repo import generate
from szrag.index import build_index
from szrag.llm.testing import ScriptedProvider, serve

WORK = Path(__file__).parent / ".work"
QUESTIONS = [
    "how does the handler validate each entry",
    "where is the configuration read",
    "which function fetches the api",
    "what does the scheduler do with failed jobs",
]


def server_pid(port: int) -> int:
    """The pid of the process listening on ``port`` (read from /proc, no tools needed)."""
    wanted = f":{port:04X}"
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[1].endswith(wanted) and fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            for fd in (process / "fd").iterdir():
                if os.readlink(fd).removeprefix("socket:[").removesuffix("]") in inodes:
                    return int(process.name)
        except OSError:
            continue
    raise RuntimeError(f"no process listens on port {port}")


def resources(pid: int) -> tuple[int, int, float]:
    """(descriptors on index.db, all descriptors, RSS in MiB) of process ``pid``."""
    on_index = total = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        total += 1
        try:
            if os.readlink(fd).endswith("index.db"):
                on_index += 1
        except OSError:
            continue
    rss_kib = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return on_index, total, rss_kib / 1024


async def burst(base: str, asks: int, probes: int = 0) -> int:
    """``asks`` concurrent asks and ``probes`` concurrent ``/healthz`` and ``/api/status``
    reads (a monitor's); the number that failed."""
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        asking = [
            client.post(
                "/api/ask", json={"question": QUESTIONS[n % len(QUESTIONS)], "withAi": False}
            )
            for n in range(asks)
        ]
        probing = [client.get("/healthz" if n % 2 else "/api/status") for n in range(probes)]
        replies = await asyncio.gather(*asking, *probing)
    return sum(reply.status_code != 200 for reply in replies)


async def health_under_load(base: str, concurrent: int) -> list[float]:
    """``/healthz`` latencies (seconds) sampled while ``concurrent`` asks are in flight."""
    latencies: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        load = asyncio.ensure_future(burst(base, concurrent))
        await asyncio.sleep(0.2)
        while not load.done():
            started = time.perf_counter()
            await client.get("/healthz")
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.05)
        failed = await load
    if failed:
        print(f"  {failed} of {concurrent} asks failed")
    return latencies


def bundle(root: Path) -> None:
    parts = [
        f"function f{n}(a,b){{var t{n}=a+b*{n};if(a>{n})return fetch('/api/x{n}');return 0}}"
        for n in range(8500)
    ]
    (root / "static").mkdir(exist_ok=True)
    (root / "static" / "app.js").write_text(";".join(parts))  # under the 1 MiB cap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--cycles", type=int, default=6)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--idle", type=float, default=12.0)
    parser.add_argument("--concurrent", type=int, default=50)
    args = parser.parse_args()

    root = WORK / f"soak-repo-{args.files}"
    if not root.exists():
        generate(root, files=args.files, seed=11)
        bundle(root)
    build_index(root).close()
    provider = ScriptedProvider()
    with serve(provider) as provider_url, szrag_server(root, provider_url) as base:
        pid = server_pid(int(base.rsplit(":", 1)[1]))
        on_index, total, rss = resources(pid)
        print(f"server pid {pid} on {base}, {args.files} files and one minified bundle")
        print(f"  start      index.db fds {on_index:3d}  all fds {total:3d}  RSS {rss:6.1f} MiB")
        for cycle in range(1, args.cycles + 1):
            failed = asyncio.run(burst(base, args.burst, probes=args.burst))
            time.sleep(args.idle)
            on_index, total, rss = resources(pid)
            note = f"  ({failed} failed)" if failed else ""
            print(
                f"  cycle {cycle:3d}  index.db fds {on_index:3d}  all fds {total:3d}"
                f"  RSS {rss:6.1f} MiB{note}"
            )
        latencies = asyncio.run(health_under_load(base, args.concurrent))
        print(
            f"/healthz while {args.concurrent} asks run ({len(latencies)} samples): median"
            f" {statistics.median(latencies) * 1000:.1f} ms, p95"
            f" {_percentile(latencies, 0.95) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
