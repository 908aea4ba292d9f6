"""Two processes racing to create or migrate the same production: one does it, the other waits."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from postproject.storage.postgresql import schema
from tests.postgresql import race_workers
from tests.postgresql_fixtures import Database

pytestmark = pytest.mark.race
CTX = multiprocessing.get_context("spawn")
ROUNDS = 8


def call(queue: Any, index: int, function: Callable[..., object], args: tuple[object, ...]) -> None:
    try:
        queue.put((index, True, function(*args)))
    except BaseException as exc:
        queue.put((index, False, f"{type(exc).__name__}: {exc}"))


def race(function: Callable[..., object], uri: str, names: list[str]) -> list[Any]:
    """Run ``function(uri, names, barrier)`` in two spawned processes; return both results."""
    queue = CTX.Queue()
    barrier = CTX.Barrier(2)
    processes = [CTX.Process(target=call, args=(queue, i, function, (uri, names, barrier))) for i in range(2)]
    for process in processes:
        process.start()
    results: dict[int, object] = {}
    try:
        for _ in processes:
            index, ok, value = queue.get(timeout=120)
            assert ok, value
            results[index] = value
    finally:
        for process in processes:
            process.join(30)
            process.kill()
    return [results[0], results[1]]


def job_clock_rows(uri: str, name: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{name}".job_clock').fetchone()  # name from this test
        return int(row[0]) if row else -1


def test_racing_ensures_create_each_production_once(postgres_database: Database) -> None:
    names = [f"race_{n}" for n in range(ROUNDS)]
    first, second = race(race_workers.ensure_each, postgres_database.uri(), names)
    for index, name in enumerate(names):
        # One process created it (found 0), the other waited on the lock and found it done.
        assert sorted((first[index], second[index])) == [0, schema.LATEST], name
        assert job_clock_rows(postgres_database.uri(), name) == 1


def test_racing_creates_succeed_once_and_refuse_once(postgres_database: Database) -> None:
    names = [f"race_{n}" for n in range(ROUNDS)]
    first, second = race(race_workers.create_each, postgres_database.uri(), names)
    for index, name in enumerate(names):
        assert sorted((first[index], second[index])) == ["already_exists", "created"], name
        assert job_clock_rows(postgres_database.uri(), name) == 1
