"""Reliability findings of the hostile review (issue 17 item 7), each reproduced first."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobState,
    Production,
    Reason,
    RepresentationKind,
)
from tests.core.jobs_helpers import TOOL, Setup, at, make_setup


@pytest.fixture
def s(production: Production, clock: FakeClock, tmp_path: Path) -> Setup:
    at(clock, 0)
    return make_setup(production, clock, tmp_path)


def test_a_day_fast_clock_locks_everyone_out_until_the_clock_is_reset(s: Setup) -> None:
    job = s.request()
    fast = FakeClock(s.clock.now() + timedelta(days=1))
    with Production.open(s.production.location, clock=fast) as ahead, ahead.edit() as tx:
        tx.claim_job_lease(job, TOOL, timedelta(minutes=5))  # raises the durable mark a day ahead
        tx.commit()
    other = s.request()
    with s.production.edit() as tx, pytest.raises(ConflictError) as refused:
        tx.claim_job_lease(other, TOOL, timedelta(minutes=5))
    assert refused.value.reason == Reason.CLOCK_REGRESSED  # check 28 still holds
    with s.production.edit() as tx:
        reset = tx.reset_clock()
        receipt = tx.commit()
    assert reset.old_mark is not None and reset.old_mark > reset.new_mark == s.clock.now()
    assert reset.fenced == (job,)  # the lease granted under the future clock
    assert receipt.revision is not None
    kinds = [e.kind for e in receipt.revision.events]
    assert kinds == ["clock_reset", "job_requeued"]
    assert receipt.revision.events[0].payload["old_mark"] == reset.old_mark.isoformat()
    assert s.production.job(job).state is JobState.REQUESTED
    lease = s.claim(other, 10_000)  # everyone works again
    s.complete(lease)


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


def test_a_media_root_reached_through_a_symlink_accepts_its_files(
    production: Production, tmp_path: Path, media: Callable[..., Path]
) -> None:
    real = tmp_path / "private" / "proxies"
    real.mkdir(parents=True)
    link = tmp_path / "proxies-link"
    link.symlink_to(real)  # like macOS /tmp -> /private/tmp
    (real / "A001.mov").write_bytes(b"proxy")
    with production.edit() as tx:
        tx.add_media_root("proxies", link)
        asset = tx.create_asset()
        rep = tx.add_representation(asset, RepresentationKind.PROXY, real / "A001.mov", root="proxies")
        tx.commit()
    assert production.representation(rep).path.as_posix() == "A001.mov"


def test_a_symlink_leaving_the_root_is_refused(production: Production, tmp_path: Path) -> None:
    root = tmp_path / "proxies"
    root.mkdir()
    outside = tmp_path / "secret.mov"
    outside.write_bytes(b"not in the root")
    (root / "escape.mov").symlink_to(outside)
    with production.edit() as tx:
        tx.add_media_root("proxies", root)
        asset = tx.create_asset()
        with pytest.raises(InvalidArgumentError, match="symbolic link"):
            tx.add_representation(asset, RepresentationKind.PROXY, "escape.mov", root="proxies")
        tx.commit()


def test_a_sequence_beyond_i64_is_an_empty_page(production: Production) -> None:
    with production.edit() as tx:
        tx.create_asset()
        tx.commit()
    huge = 2**63 + 5
    changes = production.changes_since(huge)
    assert changes.revisions == () and changes.through_sequence == huge
    assert len(production.revisions(before=huge)) == 1


def test_a_nul_byte_in_a_path_is_an_invalid_argument(production: Production) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        with pytest.raises(InvalidArgumentError, match="NUL"):
            tx.add_representation(asset, RepresentationKind.ORIGINAL, "/tmp/a\x00b.mov")


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


@pytest.mark.parametrize(
    "name",
    [
        "/media/A001.mov",
        "relative/caf\u00e9.mov",
        "/media/caf\udce9.mov",
        "\x01starts-with-the-marker.mov",
        "\x01",
    ],
)
def test_every_file_name_round_trips_through_storage(name: str) -> None:
    from postproject.model import paths

    stored = paths.encode_path(name)
    stored.encode("utf-8")  # storable as text
    assert paths.decode_path(stored) == name
