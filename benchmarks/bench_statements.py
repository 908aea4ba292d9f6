"""SQL statements per job operation on the SQLite engine, counted with a trace callback.

Counts every statement the library sends (savepoints, BEGIN and COMMIT included; a
trigger's statements are not counted apart from the statement that fired them) for one
request, one claim and one completion (add the output, record its activity, complete the
lease), each in its own edit, on a fresh production. ``--json`` prints the figures.

    python benchmarks/bench_statements.py
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from postproject import (
    ActivitySpec,
    AgentIdentity,
    JobRequest,
    Production,
    RepresentationKind,
    ToolIdentity,
)

TOOL = ToolIdentity("bench-worker", "1")
KIND = "org.example:generate-proxy"


@contextmanager
def traced() -> Iterator[list[str]]:
    """Record the statements of every SQLite connection opened inside the block."""
    statements: list[str] = []
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    sqlite3.connect = connect  # type: ignore[assignment]
    try:
        yield statements
    finally:
        sqlite3.connect = real_connect


def count(statements: list[str], action: Callable[[], object]) -> int:
    """Statements the library sent for ``action``: a trigger's statements are reported with
    their parent's text, so consecutive repeats of one text count once."""
    before = len(statements)
    action()
    sent = statements[before:]
    return sum(1 for i, text in enumerate(sent) if i == 0 or text != sent[i - 1])


def measure(root: Path) -> dict[str, Any]:
    source = root / "A001.mov"
    source.write_bytes(b"original essence\n")
    output = root / "A001.proxy.mov"
    output.write_bytes(b"proxy essence\n")
    with traced() as statements, Production.create(root / "bench.pproj") as production:
        with production.edit() as tx:
            asset = tx.create_asset("A001")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            tx.commit()
        request = JobRequest(KIND, (original,), asset, RepresentationKind.PROXY)
        figures: dict[str, Any] = {}

        def do_request() -> None:
            with production.edit() as tx:
                tx.request_job(request)
                tx.commit()

        figures["request"] = count(statements, do_request)
        holder: dict[str, Any] = {}

        def do_claim() -> None:
            with production.edit() as tx:
                holder["lease"] = tx.claim_next_job_lease(
                    TOOL, timedelta(minutes=5), agent=AgentIdentity("bench")
                )
                tx.commit()

        figures["claim"] = count(statements, do_claim)
        lease = holder["lease"]

        def do_complete() -> None:
            with production.edit() as tx:
                proxy = tx.add_representation(asset, RepresentationKind.PROXY, output)
                activity = tx.create_activity(
                    ActivitySpec(KIND, inputs=(original,), outputs=(proxy,), tool=TOOL)
                )
                tx.complete_job_lease(lease, proxy, activity)
                tx.commit()

        figures["completion"] = count(statements, do_complete)
        figures["claim_plus_completion"] = figures["claim"] + figures["completion"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        figures = measure(Path(root))
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"  statements per {name:<22} {value}")


if __name__ == "__main__":
    main()
