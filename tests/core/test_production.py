"""Creating and opening productions; the file is always a production or a clear error."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from postproject import (
    AlreadyExistsError,
    AssetId,
    ConflictError,
    ErrorCode,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    Production,
    ProductionId,
    RepresentationId,
    RepresentationKind,
    StorageError,
    UnsupportedError,
)


def test_create_then_open_keeps_the_identity(tmp_path: Path) -> None:
    path = tmp_path / "p.pproj"
    with Production.create(path) as created:
        assert isinstance(created.id, ProductionId)
        assert created.latest_revision() is None
        identity = created.id
    with Production.open(path) as reopened:
        assert reopened.id == identity
        assert reopened.latest_revision() is None
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_create_over_an_existing_file_fails(tmp_path: Path) -> None:
    path = tmp_path / "p.pproj"
    path.write_bytes(b"precious")
    with pytest.raises(AlreadyExistsError) as raised:
        Production.create(path)
    assert raised.value.code is ErrorCode.ALREADY_EXISTS
    assert path.read_bytes() == b"precious"
    Production.create(tmp_path / "q.pproj").close()
    with pytest.raises(AlreadyExistsError):
        Production.create(tmp_path / "q.pproj")


CREATOR = """
import sys
from pathlib import Path
from postproject import Production
for i in range(int(sys.argv[2])):
    Production.create(Path(sys.argv[1]) / f"p{i}.pproj").close()
"""


def test_a_production_being_created_is_never_seen_half_made(tmp_path: Path) -> None:
    """Another process (the monitor, a worker) opening a production while it is being created
    finds nothing, then a whole production: never an empty schema ("version 0")."""
    count = 12
    creator = subprocess.Popen(
        [sys.executable, "-c", CREATOR, str(tmp_path), str(count)], stderr=subprocess.PIPE
    )
    seen: list[str] = []
    try:
        for i in range(count):
            path = tmp_path / f"p{i}.pproj"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    with Production.open(path, read_only=True) as production:
                        assert production.latest_revision() is None
                    break
                except NotFoundError:
                    continue
                except (StorageError, UnsupportedError) as exc:  # the half-made file
                    seen.append(f"{path.name}: {exc}")
            else:
                pytest.fail(f"{path.name} never appeared")
    finally:
        _, err = creator.communicate(timeout=60)
    assert creator.returncode == 0, err
    assert seen == []
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_creating_leaves_no_temporary_file(tmp_path: Path) -> None:
    Production.create(tmp_path / "p.pproj").close()
    with pytest.raises(AlreadyExistsError):
        Production.create(tmp_path / "p.pproj")
    with pytest.raises(IoError, match=str(tmp_path / "absent" / "q.pproj")):
        Production.create(tmp_path / "absent" / "q.pproj")
    assert [p.name for p in tmp_path.iterdir()] == ["p.pproj"]


def test_opening_nothing_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=str(tmp_path / "absent.pproj")):
        Production.open(tmp_path / "absent.pproj")
    assert not (tmp_path / "absent.pproj").exists()


@pytest.mark.parametrize("content", [b"", b"this is not a database at all" * 100, bytes(range(256)) * 64])
def test_opening_a_non_production_is_a_storage_error_naming_the_path(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.pproj"
    path.write_bytes(content)
    with pytest.raises(StorageError) as raised:
        Production.open(path)
    assert str(path) in str(raised.value)
    assert raised.value.reason in ("not_a_production", "corrupt")


def test_opening_another_sqlite_database_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StorageError, match="not a PostProject production"):
        Production.open(path)


def test_a_truncated_production_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "p.pproj"
    Production.create(path).close()
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\xff" * (len(data) - 100))
    for side in ("-wal", "-shm"):
        Path(f"{path}{side}").unlink(missing_ok=True)
    with pytest.raises(StorageError), Production.open(path) as production:
        production.jobs()


def test_a_newer_schema_is_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "p.pproj"
    Production.create(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 999")
    with pytest.raises(UnsupportedError, match="999"):
        Production.open(path)


def test_read_only_never_writes(tmp_path: Path, media: object) -> None:
    path = tmp_path / "p.pproj"
    Production.create(path).close()
    before = path.read_bytes()
    with Production.open(path, read_only=True) as production:
        assert production.read_only
        with pytest.raises(ConflictError, match="read-only"):
            production.edit()
        production.jobs()
        production.latest_revision()
    assert path.read_bytes() == before


def test_closed_productions_reject_reads(tmp_path: Path) -> None:
    production = Production.create(tmp_path / "p.pproj")
    production.close()
    production.close()
    with pytest.raises(ConflictError, match="closed"):
        production.jobs()


def test_one_open_edit_per_handle(production: Production) -> None:
    with production.edit() as first:
        first.create_asset()
        with production.edit() as second, pytest.raises(ConflictError):
            second.create_asset()
        first.commit()


def test_representation_kind_parsing() -> None:
    assert RepresentationKind.parse("proxy") is RepresentationKind.PROXY
    with pytest.raises(ValueError, match="representation kind"):
        RepresentationKind.parse("PROXY")


@pytest.mark.sqlite_only("SQLite's write-ahead log file")
def test_the_writer_bounds_the_wal(production: Production, monkeypatch: pytest.MonkeyPatch) -> None:
    from postproject.storage.sqlite import connection

    monkeypatch.setattr(connection, "TRUNCATE_EVERY", 50)
    with production.edit() as tx:
        tx.create_asset()
        tx.commit()

    wal = Path(f"{production.path}-wal")
    for _ in range(connection.TRUNCATE_EVERY - 1):
        with production.edit() as tx:
            tx.create_asset("x" * 900)
            tx.commit()
    # the writer's periodic truncating checkpoint ran on the last commit
    assert wal.stat().st_size == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to the nobody account to lose write access")
def test_a_production_in_a_directory_we_cannot_write_opens_read_only() -> None:
    base = Path(tempfile.mkdtemp(prefix="pp-readonly-"))
    try:
        path = base / "show.pproj"
        with Production.create(path) as production, production.edit() as tx:
            tx.create_asset("A001")
            tx.commit()
        os.chmod(base, 0o755)
        os.chmod(path, 0o644)
        script = textwrap.dedent(
            f"""
            from postproject import Production
            with Production.open({str(path)!r}, read_only=True) as p:
                print(p.latest_sequence(), p.assets().items[0].name)
            """
        )

        def drop() -> None:
            os.setgid(65534)
            os.setuid(65534)

        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            preexec_fn=drop,
            env={**os.environ, "HOME": "/tmp"},
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", "A001"]
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def test_assets_and_representations_read_by_ids_together(production: Production, tmp_path: Path) -> None:
    """One read for many ids (what a page of jobs naming many assets needs): what exists, by id;
    an unknown id is left out; a repeated id is read once; a string is no list of ids."""
    for n in range(3):
        (tmp_path / f"A{n:03}.mov").write_bytes(b"essence")
    with production.edit() as tx:
        assets = [tx.create_asset(f"A{n:03}") for n in range(3)]
        reps = [
            tx.add_representation(a, RepresentationKind.ORIGINAL, tmp_path / f"A{n:03}.mov")
            for n, a in enumerate(assets)
        ]
        tx.commit()
    unknown_asset, unknown_rep = AssetId.new(), RepresentationId.new()
    found = production.assets_by_id([*assets, assets[0], unknown_asset])
    assert {a: found[a].name for a in found} == {a: f"A{n:03}" for n, a in enumerate(assets)}
    files = production.representations_by_id([*reps, unknown_rep])
    assert {r: files[r].path.name for r in files} == {r: f"A{n:03}.mov" for n, r in enumerate(reps)}
    assert production.assets_by_id([]) == {} and production.representations_by_id(iter(())) == {}
    with pytest.raises(InvalidArgumentError):
        production.assets_by_id(str(assets[0]))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        production.representations_by_id([str(reps[0])])  # type: ignore[list-item]


def test_commit_times_of_many_revisions_read_together(production: Production) -> None:
    for _ in range(3):
        with production.edit() as tx:
            tx.create_asset()
            tx.commit()
    newest = production.revisions(limit=3)
    times = production.commit_times([r.sequence for r in newest] + [newest[0].sequence + 100])
    assert times == {r.sequence: r.committed_at for r in newest}
    assert production.commit_times([]) == {}
    for bad in ("12", [0], [True], [1.5]):
        with pytest.raises(InvalidArgumentError):
            production.commit_times(bad)  # type: ignore[arg-type]
