"""The PostgreSQL schema is SQLite's in another dialect, and its runner is all or nothing."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from postproject import Production
from postproject.cli import app as cli
from postproject.model.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    MigrationError,
    NotFoundError,
    StorageError,
    UnsupportedError,
)
from postproject.storage.postgresql import connection, localserver, schema, uri
from postproject.storage.sql import versions
from tests import pre_baseline
from tests.postgresql_fixtures import Database

A, R, X, OTHER, J = (uuid.UUID(int=n) for n in (0xA, 0xB, 0xC, 0xD, 0xE))
SEQ = 1_000_000


@pytest.fixture
def conn(postgres_database: Database) -> Iterator[psycopg.Connection[Any]]:
    with connection.connect(uri.parse(postgres_database.uri(production="prod"))) as conn:
        yield conn


@pytest.fixture
def sqlite_conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    path = tmp_path / "reference.pproj"
    Production.create(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    yield conn
    conn.close()


# SQLite's trigram FTS5 tables keep their index in shadow tables; PostgreSQL's asset_search and
# job_diagnostics are plain tables (the same columns) with GIN trigram indexes instead.
FTS5_SHADOWS = tuple(
    f"{table}_{part}"
    for table in ("asset_search", "job_diagnostics", "job_parameter_search")
    for part in ("data", "idx", "content", "docsize", "config")
)
TRIGRAM_INDEXES = {("asset_search_name", "asset_search"), ("job_diagnostics_body", "job_diagnostics")}
# Job parameters (migration 0010): SQLite finds them through a trigram FTS5 table of their own,
# PostgreSQL through a GIN trigram index on job_parameters.
SQLITE_ONLY_TABLES = {"job_parameter_search"}
PG_ONLY_INDEXES = TRIGRAM_INDEXES | {("job_parameters_value", "job_parameters")}
# PostgreSQL checks the invariants of the tables every job writes with row triggers where SQLite
# has CHECK constraints (PostgreSQL rebuilds CHECKs from text at every statement that writes
# their table): the jobs table's since migration 0006, five more since 0019.
INVARIANT_TRIGGERS = {
    "jobs_invariants",
    "job_attempts_invariants",
    "revisions_invariants",
    "activities_invariants",
    "representations_invariants",
    "representation_fingerprints_invariants",
}


def tables_of(conn: psycopg.Connection[Any], name: str) -> list[str]:
    found = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY table_name",
        (name,),
    ).fetchall()
    conn.rollback()
    return [row[0] for row in found]


def dump_schema(database: Database, name: str) -> str:
    """``pg_dump --schema-only`` of one production's schema, its name replaced by ``SCHEMA``
    (and without the dump's random ``\\restrict`` key)."""
    bindir = localserver.find_bindir()
    assert bindir is not None and (bindir / "pg_dump").is_file(), "pg_dump comes with the server binaries"
    server = database.server
    dumped = subprocess.run(
        [bindir / "pg_dump", "--schema-only", "-n", name, "-h", str(server.socket_dir), "-p", str(server.port),
         "-U", localserver.ADMIN, "-d", database.name],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    lines = [line for line in dumped.splitlines() if not line.startswith(("\\restrict", "\\unrestrict"))]
    return "\n".join(lines).replace(name, "SCHEMA")


def namespaces(conn: psycopg.Connection[Any]) -> set[str]:
    names = {row[0] for row in conn.execute("SELECT nspname FROM pg_namespace").fetchall()}
    conn.rollback()
    return names


# -- the same structure as SQLite's --------------------------------------------------


def test_tables_columns_indexes_and_triggers_match_sqlite(
    conn: psycopg.Connection[Any], sqlite_conn: sqlite3.Connection
) -> None:
    assert schema.ensure(conn, "prod") == 0
    sqlite_tables = {
        name: [column[1] for column in sqlite_conn.execute(f"PRAGMA table_info({name})")]
        for (name,) in sqlite_conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not name.startswith(FTS5_SHADOWS) and name not in SQLITE_ONLY_TABLES
    }
    pg_tables: dict[str, list[str]] = {}
    for table, column in conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'prod'"
        " ORDER BY table_name, ordinal_position"
    ).fetchall():
        pg_tables.setdefault(table, []).append(column)
    assert pg_tables.pop("schema_version") == ["singleton", "version"]
    assert pg_tables == sqlite_tables

    sqlite_indexes = set(
        sqlite_conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        )
    )
    pg_indexes = set(
        conn.execute(
            "SELECT i.relname, t.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
            " JOIN pg_class t ON t.oid = x.indrelid WHERE t.relnamespace = 'prod'::regnamespace"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"
        ).fetchall()
    )
    assert pg_indexes - PG_ONLY_INDEXES == sqlite_indexes
    assert pg_indexes >= PG_ONLY_INDEXES
    sqlite_triggers = {
        row[0] for row in sqlite_conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    }
    pg_triggers = {
        row[0]
        for row in conn.execute(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
            " AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'prod'::regnamespace)"
        ).fetchall()
    }
    assert pg_triggers - INVARIANT_TRIGGERS == sqlite_triggers
    assert pg_triggers >= INVARIANT_TRIGGERS
    assert sqlite_conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST  # numbered alike
    assert conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
    ).fetchone() == (0,)


# -- the same checks as SQLite's -------------------------------------------------------

JOB = {
    "id": OTHER,
    "kind": "k",
    "inputs": b"",
    "output_asset_id": A,
    "output_kind": 1,
    "state": 1,
    "requested_at": 0,
    "requested_sequence": 1,
    "updated_sequence": 1,
    "available_at": 0,
}
CLAIMED = {
    **JOB,
    "state": 2,
    "claim_secret_hash": b"s" * 32,
    "claim_tool_name": "t",
    "claimed_at": 0,
    "claim_expires_at": 1,
    "claim_sequence": 1,
    "claim_attempt": 1,
}
REVISION = {"sequence": 2 * SEQ, "id": OTHER, "committed_at": 0, "origin": "o", "message": "é" * 2048}
REPRESENTATION = {
    "id": OTHER,
    "asset_id": A,
    "kind": 1,
    "path": "p",
    "size": 0,
    "mtime": 0,
    "created_at": 0,
    "created_sequence": 1,
}
ATTEMPT = {"job_id": J, "number": 1, "tool_name": "t", "secret_hash": b"s" * 32, "claimed_at": 0}
ACTIVITY = {
    "id": OTHER,
    "kind": "k",
    "tool_name": "t",
    "started_at": 10,
    "finished_at": 20,
    "created_sequence": 1,
}
# (table, a row both engines accept, changes that make both refuse it, empty the table first)
CASES: list[tuple[str, dict[str, object], dict[str, object], bool]] = [
    (
        "production",
        {"singleton": 1, "id": OTHER, "created_at": 0, "cursor_key": b"k" * 32},
        {"cursor_key": b"k" * 31},
        True,
    ),
    (
        "production",
        {"singleton": 1, "id": OTHER, "created_at": 0, "cursor_key": b"k" * 32},
        {"singleton": 2},
        True,
    ),
    ("revisions", REVISION, {"message": "é" * 2049}, False),  # 4098 bytes in 2049 characters
    ("revisions", REVISION, {"origin": ""}, False),
    ("revisions", REVISION, {"sequence": 0}, False),
    ("revisions", REVISION, {"principal": ""}, False),
    (
        "revision_events",
        {"sequence": SEQ, "position": 1, "kind": "x", "payload": '{"b": 1, "a": [2]}'},
        {"payload": "{no"},
        False,
    ),
    (
        "revision_events",
        {"sequence": SEQ, "position": 1, "kind": "x", "payload": "{}"},
        {"position": -1},
        False,
    ),
    ("media_roots", {"id": OTHER, "name": "root", "created_sequence": 1}, {"name": ""}, False),
    ("media_roots", {"id": OTHER, "name": "r" * 128, "created_sequence": 1}, {"name": "r" * 129}, False),
    ("assets", {"id": OTHER, "name": "B", "created_at": 0, "created_sequence": 1}, {"name": ""}, False),
    ("representations", REPRESENTATION, {"kind": 4}, False),
    ("representations", REPRESENTATION, {"size": -1}, False),
    ("representations", REPRESENTATION, {"path": ""}, False),
    ("representations", REPRESENTATION, {"asset_id": uuid.UUID(int=99)}, False),
    ("representations", REPRESENTATION, {"root_name": "no such root"}, False),
    (
        "representation_fingerprints",
        {
            "representation_id": R,
            "algorithm": "sha256",
            "version": 65535,
            "value": b"x",
            "recorded_sequence": 1,
        },
        {"version": 65536},
        False,
    ),
    (
        "representation_fingerprints",
        {
            "representation_id": R,
            "algorithm": "sha256",
            "version": 1,
            "value": b"x",
            "recorded_sequence": 1,
        },
        {"algorithm": ""},
        False,
    ),
    ("activities", ACTIVITY, {"finished_at": 5}, False),
    ("activities", ACTIVITY, {"tool_name": None, "tool_version": "1"}, False),
    ("activities", ACTIVITY, {"kind": ""}, False),
    ("job_attempts", ATTEMPT, {"number": 0}, False),
    ("job_attempts", ATTEMPT, {"secret_hash": b"s" * 31}, False),
    ("job_attempts", ATTEMPT, {"outcome": 1}, False),  # ended without an end
    ("job_attempts", ATTEMPT, {"outcome": 6, "ended_at": 1}, False),
    ("job_attempts", ATTEMPT, {"diagnostic": ""}, False),
    ("job_attempts", ATTEMPT, {"diagnostic": "é" * 2049}, False),  # 4098 bytes
    ("job_attempts", ATTEMPT, {"progress_fraction": 1.5}, False),
    ("job_attempts", ATTEMPT, {"progress_stage": ""}, False),
    ("job_attempts", ATTEMPT, {"progress_message": "m" * 1025}, False),
    (
        "activity_edges",
        {"activity_id": X, "direction": 1, "representation_id": R, "role": "", "snapshot_fingerprints": "[]"},
        {"direction": 2},
        False,
    ),
    (
        "activity_edges",
        {"activity_id": X, "direction": 1, "representation_id": R, "role": "", "snapshot_fingerprints": "[]"},
        {"snapshot_fingerprints": "[1,"},
        False,
    ),
    (
        "metadata",
        {
            "target_kind": 5,
            "target_id": A,
            "vocabulary": "v",
            "property": "p",
            "value": '"x"',
            "created_sequence": 1,
        },
        {"target_kind": 4},
        False,
    ),
    (
        "metadata",
        {
            "target_kind": 1,
            "target_id": A,
            "vocabulary": "v",
            "property": "p",
            "value": '"x"',
            "created_sequence": 1,
        },
        {"value": "nope"},
        False,
    ),
    ("jobs", JOB, {"state": 2}, False),
    ("jobs", JOB, {"state": 3}, False),
    ("jobs", JOB, {"state": 4}, False),
    ("jobs", JOB, {"state": 6}, False),
    ("jobs", JOB, {"failure_diagnostic": "boom"}, False),
    ("jobs", JOB, {"claim_secret_hash": b"s" * 32}, False),
    ("jobs", JOB, {"inputs": b"x" * 15}, False),
    ("jobs", JOB, {"kind": ""}, False),
    ("jobs", JOB, {"output_kind": 4}, False),
    ("jobs", CLAIMED, {"claim_secret_hash": b"s" * 31}, False),
    ("jobs", CLAIMED, {"claim_attempt": None}, False),
    ("jobs", JOB, {"priority": 1001}, False),
    ("jobs", JOB, {"idempotency_key": "k"}, False),
    ("jobs", CLAIMED, {"claim_expires_at": None}, False),
    (
        "jobs",
        {**JOB, "state": 4, "failure_diagnostic": "x" * 4096},
        {"failure_diagnostic": "x" * 4097},
        False,
    ),
    ("job_counts", {"kind": "z", "state": 1, "count": 0}, {"count": -1}, False),
    ("progress_signal", {"id": 1, "token": 0}, {"token": -1}, True),
    ("progress_signal", {"id": 1, "token": 0}, {"id": 2}, True),
]


class Engine:
    """Just enough of a dialect to run the same rows through both engines."""

    def __init__(
        self,
        execute: Callable[[str, tuple[object, ...]], object],
        placeholder: str,
        as_id: Callable[[uuid.UUID], object],
    ):
        self.execute, self.placeholder, self.as_id = execute, placeholder, as_id

    def insert(self, table: str, row: dict[str, object]) -> None:
        names = ", ".join(row)
        marks = ", ".join(self.placeholder for _ in row)
        values = tuple(self.as_id(v) if isinstance(v, uuid.UUID) else v for v in row.values())
        self.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", values)

    def seed(self) -> None:
        self.insert("assets", {"id": A, "name": "A", "created_at": 0, "created_sequence": 1})
        self.insert("representations", {**REPRESENTATION, "id": R})
        self.insert("activities", {**ACTIVITY, "id": X})
        self.insert("revisions", {"sequence": SEQ, "id": A, "committed_at": 0})
        self.insert("jobs", {**JOB, "id": J})


@contextmanager
def undone(run: Callable[[str], object]) -> Iterator[None]:
    run("SAVEPOINT case_")
    try:
        yield
    finally:
        run("ROLLBACK TO SAVEPOINT case_")


@pytest.mark.parametrize(("table", "good", "bad", "clear"), CASES)
def test_both_engines_refuse_the_same_rows(
    conn: psycopg.Connection[Any],
    sqlite_conn: sqlite3.Connection,
    table: str,
    good: dict[str, object],
    bad: dict[str, object],
    clear: bool,
) -> None:
    schema.ensure(conn, "prod")
    engines = [
        (
            Engine(lambda q, p: sqlite_conn.execute(q, p), "?", lambda u: u.bytes),
            lambda q: sqlite_conn.execute(q),
            sqlite3.IntegrityError,
        ),
        (
            Engine(lambda q, p: conn.execute(q.encode(), p), "%s", lambda u: u),
            lambda q: conn.execute(q.encode()),
            (psycopg.IntegrityError, psycopg.DataError),
        ),
    ]
    sqlite_conn.execute("BEGIN")
    for engine, run, refused in engines:
        engine.seed()
        with undone(run):
            if clear:
                run(f"DELETE FROM {table}")
            with undone(run), pytest.raises(refused):  # type: ignore[arg-type]
                engine.insert(table, {**good, **bad})
            engine.insert(table, good)
    sqlite_conn.execute("ROLLBACK")
    conn.rollback()


def test_a_job_row_that_breaks_an_invariant_is_refused_naming_it(conn: psycopg.Connection[Any]) -> None:
    """The jobs table's invariants (a row trigger since migration 0006) refuse a row like a CHECK
    constraint: SQLSTATE 23514, the invariant named; an invariant that is NULL holds."""
    schema.ensure(conn, "prod")
    conn.execute("SET search_path TO prod")
    Engine(lambda q, p: conn.execute(q.encode(), p), "%s", lambda u: u).seed()

    def insert(row: dict[str, object]) -> None:
        marks = ", ".join(["%s"] * len(row))
        conn.execute(f"INSERT INTO jobs ({', '.join(row)}) VALUES ({marks})".encode(), tuple(row.values()))

    for bad, invariant in (
        ({"state": 9}, "jobs_state_check1"),
        ({"state": 2}, "jobs_check5"),  # claimed without a claim
        ({"priority": -1001}, "jobs_priority_check"),
        ({"max_attempts": 0}, "jobs_max_attempts_check"),
    ):
        conn.execute("SAVEPOINT bad")
        with pytest.raises(psycopg.errors.CheckViolation) as refused:
            insert({**JOB, **bad})
        assert refused.value.diag.constraint_name == invariant
        assert invariant in str(refused.value)
        conn.execute("ROLLBACK TO SAVEPOINT bad")
    insert({**JOB, "max_attempts": None})  # NULL holds
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE jobs SET waiting = -1")
    conn.rollback()


# (table, a row the trigger accepts, a change that breaks the invariant, its name): one for each
# table whose CHECK constraints became a row trigger in migration 0019.
INVARIANTS: list[tuple[str, dict[str, object], dict[str, object], str]] = [
    ("job_attempts", ATTEMPT, {"progress_fraction": 2.0}, "job_attempts_progress_fraction_check"),
    ("revisions", REVISION, {"origin": ""}, "revisions_origin_check"),
    ("activities", ACTIVITY, {"finished_at": 5}, "activities_check"),
    ("representations", REPRESENTATION, {"size": -1}, "representations_size_check"),
    (
        "representation_fingerprints",
        {"representation_id": R, "algorithm": "sha256", "version": 1, "value": b"x", "recorded_sequence": 1},
        {"version": -1},
        "representation_fingerprints_version_check",
    ),
]


@pytest.mark.parametrize(("table", "good", "bad", "invariant"), INVARIANTS, ids=[c[0] for c in INVARIANTS])
def test_an_invariant_trigger_refuses_an_insert_and_an_update_naming_the_constraint(
    conn: psycopg.Connection[Any], table: str, good: dict[str, object], bad: dict[str, object], invariant: str
) -> None:
    """Migration 0019's row triggers refuse a row as the CHECK constraints they replace did:
    SQLSTATE 23514 with the constraint's and the table's names, on INSERT and on UPDATE; a row
    that keeps them is written."""
    schema.ensure(conn, "prod")
    conn.execute("SET search_path TO prod")
    engine = Engine(lambda q, p: conn.execute(q.encode(), p), "%s", lambda u: u)
    engine.seed()
    conn.execute("SAVEPOINT bad")
    with pytest.raises(psycopg.errors.CheckViolation) as refused:
        engine.insert(table, {**good, **bad})
    assert (refused.value.diag.constraint_name, refused.value.diag.table_name) == (invariant, table)
    assert f'violates check constraint "{invariant}"' in str(refused.value)
    conn.execute("ROLLBACK TO SAVEPOINT bad")
    engine.insert(table, good)
    column, value = next(iter(bad.items()))
    with pytest.raises(psycopg.errors.CheckViolation) as refused:
        conn.execute(
            sql.SQL("UPDATE {} SET {} = %s").format(sql.Identifier(table), sql.Identifier(column)), (value,)
        )
    assert refused.value.diag.constraint_name == invariant
    conn.rollback()


def test_the_tables_a_job_writes_have_no_check_constraints_left(conn: psycopg.Connection[Any]) -> None:
    """What migration 0019 is for: no table a worker's job writes more than once per job, or
    with more than one CHECK, keeps CHECK constraints (each would be parsed again at every
    statement that writes its table); the smaller ones keep theirs."""
    schema.ensure(conn, "prod")
    checks = dict(
        conn.execute(
            "SELECT c.relname, count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid"
            " WHERE k.contype = 'c' AND c.relnamespace = 'prod'::regnamespace GROUP BY c.relname"
        ).fetchall()
    )
    conn.rollback()
    assert not {"jobs", "job_attempts", "revisions", "activities", "representations",
                "representation_fingerprints"} & set(checks)  # fmt: skip
    assert checks["metadata"] == checks["activity_edges"] == checks["revision_events"] == 1


# -- counts maintained like SQLite's ---------------------------------------------------

# (statement with one {} per parameter, the parameters' names): a request, claim, renewal, release, cancel.
STEPS: list[tuple[str, tuple[str, ...]]] = [
    (
        "INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, state, requested_at, requested_sequence,"
        " updated_sequence, available_at) VALUES ({}, {}, {}, {}, 1, 1, 0, 1, 1, 0)",
        ("id", "kind", "empty", "asset"),
    ),
    (
        "UPDATE jobs SET state = 2, claim_secret_hash = {}, claim_tool_name = 't', claimed_at = 0,"
        " claim_expires_at = 9, claim_sequence = 2, claim_attempt = 1 WHERE id = {}",
        ("secret", "id"),
    ),
    ("UPDATE jobs SET claim_expires_at = 99 WHERE id = {}", ("id",)),
    (
        "UPDATE jobs SET state = 1, claim_secret_hash = NULL, claim_tool_name = NULL, claimed_at = NULL,"
        " claim_expires_at = NULL, claim_sequence = NULL, claim_attempt = NULL WHERE id = {}",
        ("id",),
    ),
    ("UPDATE jobs SET state = 5 WHERE id = {}", ("id",)),
]


def run_steps(
    run: Callable[[str, tuple[object, ...]], object], mark: str, as_id: Callable[[uuid.UUID], object]
) -> None:
    """Six jobs of two kinds, job N taken through the first 1 + N % 5 steps."""
    for index in range(6):
        values = {
            "id": as_id(uuid.UUID(int=100 + index)),
            "kind": "render" if index % 2 else "proxy",
            "empty": b"",
            "asset": as_id(A),
            "secret": b"s" * 32,
        }
        for statement, names in STEPS[: 1 + index % len(STEPS)]:
            run(statement.format(*[mark] * len(names)), tuple(values[name] for name in names))


def test_job_counts_follow_the_same_steps_on_both_engines(
    conn: psycopg.Connection[Any], sqlite_conn: sqlite3.Connection
) -> None:
    schema.ensure(conn, "prod")
    sqlite_conn.execute(
        "INSERT INTO assets (id, name, created_at, created_sequence) VALUES (?, 'A', 0, 1)", (A.bytes,)
    )
    conn.execute("INSERT INTO assets (id, name, created_at, created_sequence) VALUES (%s, 'A', 0, 1)", (A,))
    run_steps(lambda q, p: sqlite_conn.execute(q, p), "?", lambda u: u.bytes)
    conn.execute("SET CONSTRAINTS job_counts_insert, job_counts_update IMMEDIATE")  # as SQLite's triggers
    run_steps(lambda q, p: conn.execute(q.encode(), p), "%s", lambda u: u)
    counts = "SELECT kind, state, count FROM job_counts ORDER BY kind, state"
    expected = sqlite_conn.execute(counts).fetchall()
    assert conn.execute(counts.encode()).fetchall() == expected
    actual = "SELECT kind, state, count(*) FROM jobs GROUP BY kind, state ORDER BY kind, state"
    assert [row for row in expected if row[2]] == sqlite_conn.execute(actual).fetchall()
    assert {state for _, state, _ in expected} == {1, 2, 5}


def test_deferred_counts_apply_at_commit(conn: psycopg.Connection[Any]) -> None:
    schema.ensure(conn, "prod")
    conn.execute("INSERT INTO assets (id, name, created_at, created_sequence) VALUES (%s, 'A', 0, 1)", (A,))
    conn.commit()
    run_steps(lambda q, p: conn.execute(q.encode(), p), "%s", lambda u: u)
    assert conn.execute("SELECT count(*) FROM job_counts").fetchone() == (0,)  # not yet
    conn.commit()
    assert conn.execute("SELECT sum(count) FROM job_counts").fetchone() == (6,)
    assert conn.execute("SELECT count FROM job_counts WHERE kind = 'render' AND state = 2").fetchone() == (1,)


def test_json_is_kept_byte_for_byte_and_text_sorts_bytewise(conn: psycopg.Connection[Any]) -> None:
    schema.ensure(conn, "prod")
    payload = '{"z": 1,  "a": [1.50, 2e3], "z": 2}'  # order, spacing, duplicates, number forms
    conn.execute("INSERT INTO revisions (sequence, id, committed_at) VALUES (1, %s, 0)", (A,))
    conn.execute(
        "INSERT INTO revision_events (sequence, position, kind, payload) VALUES (1, 0, 'x', %s)", (payload,)
    )
    assert conn.execute("SELECT payload::text FROM revision_events").fetchone() == (payload,)
    names = ["b", "B", "a", "_", "é", "Z", "10", "9"]
    for index, name in enumerate(names):
        conn.execute("INSERT INTO assets VALUES (%s, %s, 0, 1)", (uuid.UUID(int=index + 1), name))
    ordered = [row[0] for row in conn.execute("SELECT name FROM assets ORDER BY name").fetchall()]
    assert ordered == sorted(names, key=lambda n: n.encode())  # SQLite's BINARY order


# -- the runner --------------------------------------------------------------------------


def test_ensure_creates_once_and_then_finds_the_latest_version(conn: psycopg.Connection[Any]) -> None:
    assert schema.read_version(conn, "prod") is None
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert schema.ensure(conn, "prod") == 0
    assert schema.ensure(conn, "prod") == schema.LATEST
    assert schema.upgrade(conn, "prod") == schema.LATEST
    assert schema.read_version(conn, "prod") == schema.LATEST
    assert conn.execute("SELECT count(*) FROM prod.job_clock").fetchone() == (1,)


def test_create_runs_its_initialiser_in_the_same_transaction(conn: psycopg.Connection[Any]) -> None:
    def initialise(c: psycopg.Connection[Any]) -> None:
        c.execute("INSERT INTO production VALUES (1, %s, 0, %s)", (A, b"k" * 32))

    schema.create(conn, "prod", initialise)
    assert conn.execute("SELECT id FROM prod.production").fetchone() == (A,)
    conn.rollback()
    with pytest.raises(AlreadyExistsError):
        schema.create(conn, "prod", initialise)
    assert conn.execute("SELECT count(*) FROM prod.production").fetchone() == (1,)


def test_a_failed_initialiser_leaves_nothing(conn: psycopg.Connection[Any]) -> None:
    before = namespaces(conn)

    def initialise(c: psycopg.Connection[Any]) -> None:
        raise InvalidArgumentError("refused halfway")

    with pytest.raises(InvalidArgumentError, match="halfway"):
        schema.create(conn, "prod", initialise)
    assert namespaces(conn) == before
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_missing_production_is_not_found(conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(NotFoundError, match="no production 'absent'"):
        schema.upgrade(conn, "absent")
    assert "absent" not in namespaces(conn)


def test_a_newer_production_is_refused_and_left_alone(conn: psycopg.Connection[Any]) -> None:
    schema.ensure(conn, "prod")
    conn.execute("UPDATE prod.schema_version SET version = %s", (schema.LATEST + 1,))
    conn.commit()
    for attempt in (lambda: schema.upgrade(conn, "prod"), lambda: schema.ensure(conn, "prod")):
        with pytest.raises(UnsupportedError, match="newer than this release"):
            attempt()
    with pytest.raises(AlreadyExistsError):
        schema.create(conn, "prod")
    assert schema.read_version(conn, "prod") == schema.LATEST + 1


def test_a_schema_without_a_production_is_refused_and_left_alone(conn: psycopg.Connection[Any]) -> None:
    """Version 0 (a schema_version and nothing else): an open that fails writes nothing."""
    conn.execute("CREATE SCHEMA prod")
    conn.execute(
        "CREATE TABLE prod.schema_version (singleton smallint PRIMARY KEY, version integer NOT NULL)"
    )
    conn.execute("INSERT INTO prod.schema_version VALUES (1, 0)")
    conn.commit()
    for read_only in (True, False):
        with pytest.raises(StorageError, match="schema version 0") as raised:
            schema.upgrade(conn, "prod", read_only=read_only)
        assert raised.value.reason == "not_a_production"
    assert schema.read_version(conn, "prod") == 0
    assert tables_of(conn, "prod") == ["schema_version"]


@pytest.mark.parametrize("version", pre_baseline.VERSIONS)
def test_a_production_made_before_the_baseline_is_refused_and_left_alone(
    postgres_database: Database, version: int
) -> None:
    location = postgres_database.uri(production="prod")
    with connection.connect(uri.parse(location), autocommit=True) as conn:
        pre_baseline.postgresql_schema(conn, "prod", version)
        before = dump_schema(postgres_database, "prod")
        for attempt in (
            lambda: schema.upgrade(conn, "prod"),
            lambda: schema.upgrade(conn, "prod", read_only=True),
            lambda: schema.ensure(conn, "prod"),
            lambda: Production.open(location),
        ):
            with pytest.raises(
                MigrationError, match="development build before the baseline schema"
            ) as raised:
                attempt()
            assert f"schema version is {version}" in str(raised.value)
        assert schema.read_version(conn, "prod") == version
    assert dump_schema(postgres_database, "prod") == before


def test_the_cli_refuses_a_pre_baseline_production_with_status_7(
    postgres_database: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    location = postgres_database.uri(production="prod")
    with connection.connect(uri.parse(location), autocommit=True) as conn:
        pre_baseline.postgresql_schema(conn, "prod", 6)
    before = dump_schema(postgres_database, "prod")
    capsys.readouterr()
    status = cli.run(["--json", "job", "list", location], stdin=io.BytesIO())
    out, err = capsys.readouterr()
    assert status == 7
    error = json.loads(out)["error"]
    assert (set(error), error["code"]) == ({"code", "message"}, "migration")
    assert "before the baseline schema" in error["message"] and postgres_database.server.password not in out
    assert err.startswith("postproject: error: ") and "(migration)" in err and "Traceback" not in err
    assert dump_schema(postgres_database, "prod") == before


def test_the_baseline_is_the_schema_the_six_development_migrations_made(
    postgres_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pg_dump --schema-only of a production made each way: the same, byte for byte."""
    baseline = [(name, script) for _, name, script in schema.MIGRATIONS.files[:1]]
    monkeypatch.setattr(schema, "MIGRATIONS", versions.checked(baseline))  # the baseline alone
    with connection.connect(uri.parse(postgres_database.uri(production="x")), autocommit=True) as conn:
        pre_baseline.postgresql_schema(conn, "made_by_migrations", 6)
        schema.create(conn, "made_by_baseline")
        rows = [
            conn.execute(f"SELECT * FROM {name}.{table}").fetchall()
            for name in ("made_by_migrations", "made_by_baseline")
            for table in ("job_clock", "progress_signal", "job_counts", "schema_version")
        ]
    assert rows[:3] == rows[4:7] and (rows[3], rows[7]) == ([(1, 6)], [(1, 7)])
    old = dump_schema(postgres_database, "made_by_migrations")
    new = dump_schema(postgres_database, "made_by_baseline")
    assert "CREATE FUNCTION SCHEMA.pp_publish(" in new and new.count("CREATE TABLE ") == 22
    assert new == old


def test_a_baseline_production_gets_the_migrations_after_it(
    conn: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    schema.ensure(conn, "prod")
    after = schema.LATEST + 1  # a synthetic migration after the real ones
    monkeypatch.setattr(
        schema,
        "MIGRATIONS",
        schema.MIGRATIONS.adding(
            f"{after:04d}_synthetic.sql", "CREATE TABLE synthetic_notes (id integer PRIMARY KEY);"
        ),
    )
    with pytest.raises(UnsupportedError, match="must be upgraded"):
        schema.upgrade(conn, "prod", read_only=True)
    assert schema.read_version(conn, "prod") == after - 1
    assert schema.upgrade(conn, "prod") == after
    assert schema.upgrade(conn, "prod", read_only=True) == after
    assert "synthetic_notes" in tables_of(conn, "prod")
    assert schema.ensure(conn, "other") == 0  # a new production: the baseline, then the rest
    assert schema.read_version(conn, "other") == after
    assert "synthetic_notes" in tables_of(conn, "other")


def test_an_empty_schema_is_adopted_and_a_foreign_one_refused(conn: psycopg.Connection[Any]) -> None:
    conn.execute("CREATE SCHEMA prod")
    conn.execute("CREATE SCHEMA someone_else")
    conn.execute("CREATE TABLE someone_else.orders (id int)")
    conn.commit()
    schema.create(conn, "prod")
    assert schema.read_version(conn, "prod") == schema.LATEST
    for attempt in (
        lambda: schema.create(conn, "someone_else"),
        lambda: schema.ensure(conn, "someone_else"),
        lambda: schema.upgrade(conn, "someone_else"),
    ):
        with pytest.raises(StorageError) as raised:
            attempt()
        assert raised.value.reason == "not_a_production"
        conn.rollback()
    tables = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'someone_else'"
    )
    assert tables.fetchall() == [("orders",)]


@pytest.mark.parametrize("name", ["x; drop table jobs", '"quoted"', "PUBLIC", "public", "", "pg_temp"])
def test_unsafe_names_are_refused_before_any_sql(conn: psycopg.Connection[Any], name: str) -> None:
    before = namespaces(conn)
    for attempt in (schema.ensure, schema.create, schema.upgrade, schema.read_version):
        with pytest.raises(InvalidArgumentError) as raised:
            attempt(conn, name)  # type: ignore[operator]
        assert raised.value.reason == "invalid_production_name"
        conn.rollback()
    assert namespaces(conn) == before


def test_identifiers_are_always_quoted(conn: psycopg.Connection[Any]) -> None:
    # A keyword is a valid name: it works only because every use is quoted.
    assert schema.ensure(conn, "select") == 0
    count = conn.execute(sql.SQL("SELECT count(*) FROM {}.jobs").format(sql.Identifier("select"))).fetchone()
    assert count == (0,)
