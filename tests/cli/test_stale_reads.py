"""Read-only opens that cannot read the WAL say so (issue 28 item 6): a production read
where this process cannot create the WAL's side files (a read-only mount; simulated here, as
the suite runs as root, by the one check that decides it) reads the WAL through an existing
``-shm``; without one, it warns on stderr and adds ``"possibly_stale": true`` to ``--json``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from postproject import FakeClock, Production
from postproject.storage.sqlite import connection
from tests.cli.helpers import Cli


@pytest.fixture
def live_copy(tmp_path: Path, clock: FakeClock) -> Path:
    """A copy of a live production (two revisions still in its WAL), side files included."""
    live = tmp_path / "live" / "show.pproj"
    live.parent.mkdir()
    production = Production.create(live, clock=clock)
    for name in ("A001", "A002"):
        with production.edit() as tx:
            tx.create_asset(name)
            tx.commit()
    assert Path(f"{live}-wal").stat().st_size > 0  # not checkpointed: the revisions are in the WAL
    copy = tmp_path / "copy" / "show.pproj"
    copy.parent.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(f"{live}{suffix}", f"{copy}{suffix}")
    production.close()
    return copy


@pytest.fixture
def read_only_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "_writable_beside", lambda path: False)


@pytest.mark.usefixtures("read_only_place")
def test_a_read_only_open_reads_the_wal_through_its_shm(cli: Cli, live_copy: Path) -> None:
    outcome = cli("--json", "revisions", "since", str(live_copy), "0")
    assert outcome.code == 0, outcome
    assert [r["sequence"] for r in outcome.json["revisions"]] == [1, 2]  # was 0 of 2
    assert "possibly_stale" not in outcome.json and "behind" not in outcome.stderr
    with Production.open(live_copy, read_only=True) as production:
        assert not production.possibly_stale


@pytest.mark.usefixtures("read_only_place")
def test_a_read_only_open_without_the_shm_says_it_may_be_behind(cli: Cli, live_copy: Path) -> None:
    Path(f"{live_copy}-shm").unlink()
    outcome = cli("--json", "revisions", "since", str(live_copy), "0")
    assert outcome.code == 0, outcome
    assert outcome.json["possibly_stale"] is True
    assert "what is shown may be behind" in outcome.stderr
    text = cli("revisions", "since", str(live_copy), "0")
    assert "what is shown may be behind" in text.stderr
    with Production.open(live_copy, read_only=True) as production:
        assert production.possibly_stale


def test_an_ordinary_read_only_open_is_not_stale(cli: Cli, live_copy: Path) -> None:
    outcome = cli("--json", "revisions", "since", str(live_copy), "0")
    assert [r["sequence"] for r in outcome.json["revisions"]] == [1, 2]
    assert "possibly_stale" not in outcome.json
