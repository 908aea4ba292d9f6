"""Two processes, each adding one edge of a provenance cycle and committing at once: one wins.

Each edit's cycle check runs before the other edit commits, so both pass it; the check that
PostgreSQL repeats at commit, under the revision-numbering lock, sees the edit published
first and refuses the second (SQLite's single writer never lets the two edits overlap).
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from postproject import Production, RepresentationKind
from tests.postgresql import race_workers

pytestmark = pytest.mark.race
CTX = multiprocessing.get_context("spawn")
ROUNDS = 3


def call(queue: Any, index: int, args: tuple[str, str, str, Any]) -> None:
    try:
        queue.put((index, True, race_workers.add_edge(*args)))
    except BaseException as exc:
        queue.put((index, False, f"{type(exc).__name__}: {exc}"))


def test_concurrent_edges_of_one_cycle_commit_only_one(postgres_uri: str, tmp_path: Path) -> None:
    with Production.create(postgres_uri) as production:
        for round_ in range(ROUNDS):
            with production.edit() as tx:
                asset = tx.create_asset(f"A{round_}")
                reps = []
                for name in ("x", "y"):
                    path = tmp_path / f"{name}{round_}.mov"
                    path.write_bytes(name.encode())
                    reps.append(tx.add_representation(asset, RepresentationKind.ORIGINAL, path))
                tx.commit()
            x, y = (str(rep) for rep in reps)
            queue, barrier = CTX.Queue(), CTX.Barrier(2)
            processes = [
                CTX.Process(target=call, args=(queue, i, (postgres_uri, a, b, barrier)))
                for i, (a, b) in enumerate(((x, y), (y, x)))
            ]
            for process in processes:
                process.start()
            try:
                outcomes = []
                for _ in processes:
                    _, ok, value = queue.get(timeout=120)
                    assert ok, value
                    outcomes.append(value)
            finally:
                for process in processes:
                    process.join(30)
                    process.kill()
            assert sorted(outcomes) == ["committed", "invalid_argument"], outcomes
            # One edge of the two was published: one of x and y was produced, from the other.
            produced = [production.producing_activities(rep) for rep in reps]
            assert sorted(len(p) for p in produced) == [0, 1], produced
            assert len(production.activities(limit=10).items) == round_ + 1
