"""The suite's reset schemas (tests/postgresql_recycling.py) are new productions in all but their
name: nothing of an earlier test's production shows, and a schema a test changed is never reset."""

from __future__ import annotations

import itertools
from pathlib import Path

import psycopg
import pytest

from postproject import FakeClock, JobRequest, Production, RepresentationKind
from postproject.storage.postgresql.localserver import LocalServer
from tests.conftest import START, SchemaLocations
from tests.postgresql_recycling import SchemaRecycler
from tests.waiting import wait_until

KIND = "org.example:proxy"


_names = itertools.count(1)


@pytest.fixture
def production_location(postgres_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> SchemaLocations:
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    return SchemaLocations(postgres_server, f"recycling{next(_names)}")


def _used(location: str, media: Path) -> None:
    """A production with a revision, a job and its asset, then closed."""
    media.write_bytes(b"shot")
    created = Production.create(location, clock=FakeClock(START), allow_injected_clock=True)
    with created as production, production.edit() as tx:
        asset = tx.create_asset("shot")
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, media)
        tx.request_job(JobRequest(KIND, (rep,), asset, RepresentationKind.PROXY))
        tx.commit()


def test_a_reset_schema_is_a_new_production(
    schema_recycler: SchemaRecycler, production_location: SchemaLocations, tmp_path: Path
) -> None:
    location = production_location("used.pproj")
    _used(location, tmp_path / "shot.mov")
    with Production.open(location) as before:
        old_id = before.id
    schema = location.rsplit("production=", 1)[1]
    _until_alone(schema_recycler)
    schema_recycler.give_back(schema)
    taken = schema_recycler.take(lambda name: location.replace(schema, name), FakeClock(START))
    assert taken is not None and taken[0] == schema
    with taken[1] as production:
        assert production.id != old_id
        assert production.latest_sequence() == 0
        assert list(production.jobs().items) == []
        assert production.job_counts() == dict.fromkeys(production.job_counts(), 0)
        with production.edit() as tx:  # its sequences start again: the first revision is 1
            tx.create_asset("again")
            receipt = tx.commit()
        assert receipt.revision is not None and receipt.revision.sequence == 1


def _rows(recycler: SchemaRecycler, schema: str) -> dict[str, int]:
    """Each table's rows, counted on the recycler's own connection (another client's would keep
    the schema from being reset until its backend ended)."""
    conn = recycler._connection()
    tables = [r[0] for r in conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'r'", (schema,)
    )]  # fmt: skip
    return {t: conn.execute(f'SELECT count(*) FROM "{schema}"."{t}"').fetchone()[0] for t in tables}


def _until_alone(recycler: SchemaRecycler) -> None:
    """Until the closed productions' backends have ended (a loaded machine can take longer than
    the 0.1 s a give-back waits; then it keeps the schema, which is right but not what is tested)."""
    wait_until(recycler._alone, "the closed productions' backends to end", timeout=30)


def test_every_table_a_test_wrote_is_emptied_again(
    schema_recycler: SchemaRecycler, production_location: SchemaLocations, tmp_path: Path
) -> None:
    """Resets after the first empty only the tables written since (by their size): whichever
    tables a test wrote, the schema holds again exactly the rows a new production holds."""
    location = production_location("twice.pproj")
    schema = location.rsplit("production=", 1)[1]
    _used(location, tmp_path / "shot.mov")
    kept = schema_recycler.kept
    _until_alone(schema_recycler)
    schema_recycler.give_back(schema)  # (the first reset in a session empties every table)
    assert schema_recycler.kept == kept, "not reset"
    fresh = _rows(schema_recycler, schema)
    taken = schema_recycler.take(lambda name: location.replace(schema, name), FakeClock(START))
    assert taken is not None and taken[0] == schema
    with taken[1] as production, production.edit() as tx:
        asset = tx.create_asset("shot")
        (tmp_path / "other.mov").write_bytes(b"other")
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, tmp_path / "other.mov")
        tx.request_job(JobRequest(KIND, (rep,), asset, RepresentationKind.PROXY))
        tx.commit()
    written = _rows(schema_recycler, schema)
    assert sum(written.values()) > sum(fresh.values())
    _until_alone(schema_recycler)
    schema_recycler.give_back(schema)
    assert schema_recycler.kept == kept, "not reset"
    assert _rows(schema_recycler, schema) == fresh


def test_a_changed_schema_is_never_reset(
    schema_recycler: SchemaRecycler, production_location: SchemaLocations, tmp_path: Path
) -> None:
    location = production_location("changed.pproj")
    _used(location, tmp_path / "shot.mov")
    schema = location.rsplit("production=", 1)[1]
    conninfo = location.split("?", 1)[0]
    with psycopg.connect(conninfo, password=production_location.server.password, autocommit=True) as conn:
        conn.execute(f'ALTER TABLE "{schema}".jobs ADD COLUMN extra integer')
    kept = schema_recycler.kept
    schema_recycler.give_back(schema)
    assert schema_recycler.kept == kept + 1
    with Production.open(location) as production:  # as the test left it
        assert production.latest_sequence() == 1
