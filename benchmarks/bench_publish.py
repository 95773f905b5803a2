"""Publishing one repository to a PostgreSQL store: the first publish, then a publish after
each edit of one file (the refresh timed apart), with what each writes to the database.

The mixed corpus (``mixed_corpus.py``) is indexed as one repository and published to a
throwaway cluster (the tests' own, from Debian's PostgreSQL). Each edit appends a comment to
one file, refreshes the SQLite index and publishes it. Printed: seconds, the write-ahead log
each publish wrote (what a streaming standby receives) and the database's size after the
edits. Run it under another checkout's source (``PYTHONPATH=OTHER/src``) for its figures.

    python benchmarks/bench_publish.py [--corpus DIR] [--edits 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' cluster

WORK = Path(__file__).parent / ".work"
EDITED = "click/src/click/core.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=WORK / "mixed")
    parser.add_argument("--edits", type=int, default=5)
    arguments = parser.parse_args()
    root: Path = arguments.corpus
    if not (root / EDITED).is_file():
        raise SystemExit(f"no {EDITED} under {root}: build the corpus with mixed_corpus.py")

    import psycopg

    import szrag
    from szrag.index import load_index, refresh_index
    from szrag.index.pg import publish
    from tests.conftest import running_cluster

    def wal(url: str) -> int:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
        return int(row[0]) if row else 0

    def size(url: str) -> int:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    edited = root / EDITED
    original = edited.read_text(encoding="utf-8")
    print(f"szrag from {Path(szrag.__file__).parent}; corpus {root}")
    with running_cluster() as cluster:
        if isinstance(cluster, str):
            raise SystemExit(cluster)
        url = cluster.create_database()
        with load_index(root) as index:
            files = len(index.file_entries())
            before = wal(url)
            first = publish(index, url, "whole")
            first_wal = wal(url) - before
            first_size = size(url)
            refreshes: list[float] = []
            publishes: list[float] = []
            written: list[int] = []
            try:
                for turn in range(arguments.edits):
                    edited.write_text(original + f"\n# edit {turn}\n", encoding="utf-8")
                    started = time.perf_counter()
                    refresh_index(index)
                    refreshes.append(time.perf_counter() - started)
                    before = wal(url)
                    publishes.append(publish(index, url, "whole").elapsed)
                    written.append(wal(url) - before)
            finally:
                edited.write_text(original, encoding="utf-8")
            after_size = size(url)
    mib = 2**20
    print(f"| figure ({files} files as one repository) | value |")
    print("|---|---|")
    print(f"| first publish | {first.elapsed:.2f} s, {first_wal / mib:.0f} MiB of WAL |")
    print(
        f"| publish after one edit, median of {len(publishes)} | "
        f"{statistics.median(publishes):.2f} s (refresh {statistics.median(refreshes):.2f} s),"
        f" {statistics.median(written) / mib:.1f} MiB of WAL |"
    )
    print(
        f"| database size after the first publish / after the edits | "
        f"{first_size / mib:.0f} / {after_size / mib:.0f} MiB |"
    )


if __name__ == "__main__":
    main()
