"""SQLite's schema: one baseline (version 7), numbered migrations after it, and productions
made before the baseline refused cleanly, with nothing written."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from postproject import JobState, Production
from postproject.cli.app import run
from postproject.model.errors import MigrationError, StorageError, UnsupportedError
from postproject.storage.sql import versions
from postproject.storage.sqlite import schema
from tests import pre_baseline
from tests.races.test_races import CTX, Processes

# A next migration that fails when applied twice (as a real one would).
SYNTHETIC = """-- A test's next migration.
ALTER TABLE jobs ADD COLUMN synthetic INTEGER;
CREATE TABLE synthetic_notes (id INTEGER PRIMARY KEY, note TEXT NOT NULL) STRICT;
"""


def files_of(directory: Path, *, read_only: bool = False) -> dict[str, bytes]:
    """Every file in ``directory`` and its bytes (a production and any side files). A read-only
    connection cannot remove the WAL's side files it opened (as after any read-only open of a
    production), so those are left out then."""
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.iterdir())
        if p.is_file() and not (read_only and p.name.endswith(("-wal", "-shm")))
    }


def schema_of(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(path)
    try:
        return pre_baseline.sqlite_schema(conn)
    finally:
        conn.close()


def baseline_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make productions with the baseline alone (none of the migrations after it)."""
    baseline = [(name, script) for _, name, script in schema.MIGRATIONS.files[:1]]
    monkeypatch.setattr(schema, "MIGRATIONS", versions.checked(baseline))


def test_the_baseline_is_the_schema_the_six_development_migrations_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every table, column, index, trigger and seeded row is the same (the statements' text
    differs only in layout and comments); only the version number moves on."""
    old = schema_of(pre_baseline.sqlite_file(tmp_path / "old.pproj", 6, jobs=0))
    baseline_only(monkeypatch)
    Production.create(tmp_path / "new.pproj").close()
    new = schema_of(tmp_path / "new.pproj")
    assert (old.pop("pragma user_version"), new.pop("pragma user_version")) == (6, versions.BASELINE)
    assert len(new) > 150
    assert new == old


def test_a_new_production_is_made_from_the_baseline_and_the_migrations_after_it() -> None:
    assert [(number, name) for number, name, _ in schema.MIGRATIONS.files] == [
        (7, "0007_baseline.sql"),
        (8, "0008_service.sql"),
        (9, "0009_job_path.sql"),
        (10, "0010_monitor_scale.sql"),
        (11, "0011_roles.sql"),
        (12, "0012_job_path_functions.sql"),
        (13, "0013_worker_calls.sql"),
        (14, "0014_complete_call.sql"),
        (15, "0015_lean_calls.sql"),
        (16, "0016_claim_reads_first.sql"),
        (17, "0017_complete_inputs_once.sql"),
        (18, "0018_claim_numbered_when_free.sql"),
        (19, "0019_invariant_triggers.sql"),
        (20, "0020_fewer_statements.sql"),
    ]
    assert (versions.BASELINE, schema.LATEST) == (7, 20)


@pytest.mark.parametrize("version", pre_baseline.VERSIONS)
@pytest.mark.parametrize("read_only", [False, True])
def test_a_production_made_before_the_baseline_is_refused_and_left_untouched(
    tmp_path: Path, version: int, read_only: bool
) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    path = pre_baseline.sqlite_file(folder / "old.pproj", version)
    before = files_of(folder)
    with pytest.raises(MigrationError) as raised:
        Production.open(path, read_only=read_only)
    message = str(raised.value)
    assert "development build before the baseline schema" in message
    assert f"schema version is {version}" in message and str(path) in message
    assert "create a new production" in message
    assert files_of(folder, read_only=read_only) == before  # byte for byte, no side file left


def test_the_cli_refuses_a_pre_baseline_production_with_status_7(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pre_baseline.sqlite_file(tmp_path / "old.pproj", 6)
    before = path.read_bytes()
    capsys.readouterr()
    status = run(["--json", "job", "list", str(path)], stdin=io.BytesIO())
    out, err = capsys.readouterr()
    assert status == 7
    error = json.loads(out)["error"]
    assert (set(error), error["code"]) == ({"code", "message"}, "migration")
    assert "before the baseline schema" in error["message"]
    assert err.count("\n") == 1 and err.startswith("postproject: error: ") and "(migration)" in err
    assert "Traceback" not in err
    assert path.read_bytes() == before


@pytest.mark.parametrize("read_only", [False, True])
def test_a_file_with_our_id_and_no_schema_is_refused_without_being_written(
    tmp_path: Path, read_only: bool
) -> None:
    """Issue 28 (11): schema version 0 used to be migrated in place, then refused."""
    folder = tmp_path / "empty"
    folder.mkdir()
    path = folder / "empty.pproj"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA application_id = {pre_baseline.APPLICATION_ID}")
    conn.close()
    before = files_of(folder)
    with pytest.raises(StorageError) as raised:
        Production.open(path, read_only=read_only)
    assert raised.value.reason == "not_a_production"
    assert "schema version 0" in str(raised.value)
    assert files_of(folder, read_only=read_only) == before


# -- the runner, with a synthetic next migration ------------------------------------------


NEXT = schema.LATEST + 1  # the synthetic migration's number, after the real ones


def next_migration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        schema, "MIGRATIONS", schema.MIGRATIONS.adding(f"{NEXT:04d}_synthetic.sql", SYNTHETIC)
    )


def test_a_baseline_production_gets_the_migrations_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "current.pproj"
    Production.create(path).close()
    next_migration(monkeypatch)
    with pytest.raises(UnsupportedError, match="must be upgraded"):
        Production.open(path, read_only=True)
    assert schema_of(path)["pragma user_version"] == NEXT - 1
    Production.open(path).close()
    migrated = schema_of(path)
    assert migrated["pragma user_version"] == NEXT
    assert "table synthetic_notes" in migrated
    Production.open(path, read_only=True).close()
    Production.create(tmp_path / "next.pproj").close()  # a new production: the baseline, then the rest
    created = schema_of(tmp_path / "next.pproj")
    assert created == migrated


def test_migrations_must_follow_the_baseline_in_order() -> None:
    with pytest.raises(MigrationError, match="numbered consecutively"):
        schema.MIGRATIONS.adding(f"{NEXT + 1:04d}_gap.sql", SYNTHETIC)
    with pytest.raises(MigrationError, match=r"0007_baseline\.sql"):
        versions.checked([("0001_initial.sql", b"")])


def _migrate_and_count(path: str, barrier: object) -> int:
    """In a spawned process: open with the synthetic next migration known (racing another)."""
    schema.MIGRATIONS = schema.MIGRATIONS.adding(f"{NEXT:04d}_synthetic.sql", SYNTHETIC)
    barrier.wait()  # type: ignore[attr-defined]
    with Production.open(path) as production:
        return production.job_counts()[JobState.REQUESTED]


@pytest.mark.race
def test_two_processes_opening_an_older_schema_migrate_it_once(tmp_path: Path) -> None:
    """Both wait for the write lock; the second finds the migration applied (a migration
    applied twice fails: its table exists)."""
    path = pre_baseline.sqlite_file(tmp_path / "seven.pproj", 6)
    conn = sqlite3.connect(path)  # one requested job, at version 7 (the baseline is version 6's schema)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    barrier = CTX.Barrier(2)
    runs = Processes()
    for _ in range(2):
        runs.start(_migrate_and_count, str(path), barrier)
    assert runs.results(120) == [1, 1]
    assert schema_of(path)["pragma user_version"] == NEXT
