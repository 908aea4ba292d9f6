"""The database roles (issue 28 item 3, docs/postgresql.md "Database roles"): ``db-roles
create`` makes pp_owner, pp_writer and pp_reader; the schema belongs to pp_owner (``init`` as a
member of it makes the tables pp_owner's); pp_writer runs the whole job path (request, claim,
progress, complete, fail, cancel, a fingerprint replaced) but cannot UPDATE, DELETE or
TRUNCATE history, nor drop anything; pp_reader reads."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import errors, sql

from postproject import (
    ActivitySpec,
    AgentIdentity,
    JobRequest,
    JobState,
    Production,
    RepresentationKind,
    ToolIdentity,
)
from postproject.storage.postgresql.localserver import LocalServer
from tests.cli.helpers import Cli
from tests.postgresql_fixtures import Database

HISTORY = ("revisions", "revision_events", "activities", "activity_edges", "representation_fingerprints")
PASSWORD = "role-test-password"
TOOL = ToolIdentity("Roles", "1.0", "https://example.com/roles")
AGENT = AgentIdentity("render-01")
_numbers = itertools.count()


@dataclass
class Logins:
    """Login roles of one test: a superuser (the DBA) and one member of each pp_ role."""

    database: Database
    suffix: str

    def name(self, what: str) -> str:
        return f"{what}_{self.suffix}"

    def uri(self, what: str) -> str:
        uri = self.database.uri("farm").replace(
            "postgresql://postproject:", f"postgresql://{self.name(what)}:", 1
        )
        return uri.replace(f":{self.database.server.password}@", f":{PASSWORD}@", 1)

    def connect(self, what: str) -> psycopg.Connection[Any]:
        server = self.database.server
        return psycopg.connect(
            host=server.host,
            port=server.port,
            user=self.name(what),
            password=PASSWORD,
            dbname=self.database.name,
            autocommit=True,
        )


@pytest.fixture
def logins(postgres_database: Database) -> Iterator[Logins]:
    server: LocalServer = postgres_database.server
    found = Logins(postgres_database, f"{os.getpid()}_{next(_numbers)}")
    admin = server.admin()
    admin.execute(
        sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
            sql.Identifier(found.name("dba")), sql.Literal(PASSWORD)
        )
    )
    for what in ("owner", "writer", "reader"):
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(found.name(what)), sql.Literal(PASSWORD)
            )
        )
    yield found
    server.drop_database(postgres_database.name)
    for what in ("dba", "owner", "writer", "reader"):
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(found.name(what))))


def grant_members(logins: Logins) -> None:
    admin = logins.database.server.admin()
    for what in ("owner", "writer", "reader"):
        admin.execute(
            sql.SQL("GRANT {} TO {}").format(sql.Identifier(f"pp_{what}"), sql.Identifier(logins.name(what)))
        )


def owners(conn: psycopg.Connection[Any]) -> set[str]:
    rows = conn.execute(
        "SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.relnamespace = 'farm'::regnamespace "
        "UNION SELECT pg_get_userbyid(p.proowner) FROM pg_proc p WHERE p.pronamespace = 'farm'::regnamespace "
        "UNION SELECT pg_get_userbyid(n.nspowner) FROM pg_namespace n WHERE n.nspname = 'farm'"
    ).fetchall()
    return {row[0] for row in rows}


def job_path(location: str, media: Path) -> None:
    """Everything the farm does, through the public API, as the role in ``location``."""
    source = media / "A001.mov"
    source.write_bytes(b"original essence")
    with Production.open(location) as production:
        with production.edit() as tx:
            asset = tx.create_asset("A001")
            original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
            tx.commit()
        source.write_bytes(b"original essence, graded")  # its fingerprint replaced: pp_set_fingerprint
        with production.edit() as tx:
            assert tx.observe_representation(original)
            tx.commit()
        jobs = []
        with production.edit() as tx:
            for _ in range(5):
                jobs.append(
                    tx.request_job(
                        JobRequest("org.example:proxy", (original,), asset, RepresentationKind.PROXY)
                    )
                )
            tx.commit()
        done, failed, cancelled, quick, called = jobs
        with production.edit() as tx:
            lease = tx.claim_job_lease(done, TOOL, timedelta(minutes=5), agent=AGENT)
            tx.commit()
        with production.edit() as tx:
            tx.renew_job_lease(lease, timedelta(minutes=10))
            tx.report_progress(lease, fraction=0.5, stage="encode")
            tx.record_attempt_log(lease, tail="encoding\n")
            tx.commit()
        output = media / "A001_proxy.mov"
        output.write_bytes(b"proxy essence")
        with production.edit() as tx:
            rep = tx.add_representation(asset, RepresentationKind.PROXY, output)
            activity = tx.create_activity(
                ActivitySpec("org.example:proxy", inputs=(original,), outputs=(rep,), tool=TOOL)
            )
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        with production.edit() as tx:
            lease = tx.claim_job_lease(failed, TOOL, timedelta(minutes=5), agent=AGENT)
            tx.commit()
        with production.edit() as tx:
            tx.fail_job_lease(lease, "codec exploded")
            tx.commit()
        with production.edit() as tx:
            tx.cancel_job(cancelled)
            tx.commit()
        with production.edit() as tx:
            tx.finalize_lost()
            tx.commit()
        # a worker's calls (0013): the claim in one pp_claim_next call, the completion's lease
        # check (pp_lease_check) sent with its commit
        lease = production.claim_next_job_lease(TOOL, timedelta(minutes=5), agent=AGENT)
        assert lease is not None and lease.job_id == quick
        output = media / "A001_quick.mov"
        output.write_bytes(b"proxy essence")
        with production.edit(defer_lease_checks=True) as tx:
            rep = tx.add_representation(asset, RepresentationKind.PROXY, output)
            activity = tx.create_activity(
                ActivitySpec("org.example:proxy", inputs=(original,), outputs=(rep,), tool=TOOL)
            )
            tx.record_attempt_log(lease, tail="done\n")
            tx.complete_job_lease(lease, rep, activity)
            tx.commit()
        # the worker's one-call claim and completion (0013-0015: pp_claim_next, pp_complete,
        # each numbering and inserting its revision and events itself)
        work = production.claim_next_job(TOOL, timedelta(minutes=5), agent=AGENT)
        assert work is not None and work.job.id == called
        output = media / "A001_called.mov"
        output.write_bytes(b"proxy essence, one call")
        production.complete_job(work.lease, output, tool=TOOL, agent=AGENT, tail="done\n")
        states = [production.job(job).state for job in jobs]
        assert states == [JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED] + [JobState.SUCCEEDED] * 2


def refused(conn: psycopg.Connection[Any], statement: str) -> bool:
    try:
        conn.execute(statement)
    except errors.InsufficientPrivilege:
        return True
    return False


def test_db_roles_sql_is_printed_without_running_it(cli: Cli, logins: Logins) -> None:
    outcome = cli("db-roles", "create", logins.uri("dba"), "--sql")
    assert outcome.code == 0, outcome
    for text in ("CREATE ROLE pp_owner NOLOGIN", "pp_writer", "pp_reader", "AUTHORIZATION pp_owner"):
        assert text in outcome.stdout
    assert (
        "REVOKE UPDATE, DELETE, TRUNCATE ON %I.%I FROM pp_writer" in outcome.stdout
        and "'revisions'" in outcome.stdout
    )
    assert PASSWORD not in outcome.stdout + outcome.stderr
    with logins.connect("dba") as conn:  # nothing ran
        assert conn.execute("SELECT to_regnamespace('farm')").fetchone() == (None,)


def test_pp_writer_runs_the_job_path_but_cannot_rewrite_or_drop_history(
    cli: Cli, logins: Logins, tmp_path: Path
) -> None:
    made = cli.json("db-roles", "create", logins.uri("dba"))
    assert made["roles"] == ["pp_owner", "pp_writer", "pp_reader"] and made["applied"] is True
    grant_members(logins)
    cli.json("init", logins.uri("owner"))  # the owner's member makes the tables: pp_owner's
    with logins.connect("dba") as conn:
        assert owners(conn) == {"pp_owner"}
        definers = conn.execute(
            "SELECT proname, proconfig FROM pg_proc WHERE pronamespace = 'farm'::regnamespace AND prosecdef "
            "ORDER BY proname"
        ).fetchall()
        assert [name for name, _ in definers] == ["pp_publish", "pp_set_fingerprint"]
        assert all(config == ["search_path=farm, pg_temp"] for _, config in definers)
        # 0012's pp_commit only inserts (then calls pp_number and pp_publish): the caller's
        # rights, its search_path pinned all the same
        commit = conn.execute(
            "SELECT prosecdef, proconfig FROM pg_proc WHERE pronamespace = 'farm'::regnamespace "
            "AND proname = 'pp_commit'"
        ).fetchall()
        assert commit == [(False, ["search_path=farm"])]
        # the worker's calls (0013-0015) update jobs (the attempt by trigger) and the clock, and
        # insert their revisions and events (pp_claim_next, pp_complete) or publish through
        # pp_publish: the caller's rights, their search_path pinned
        calls = conn.execute(
            "SELECT proname, prosecdef, proconfig FROM pg_proc WHERE pronamespace = 'farm'::regnamespace "
            "AND proname IN ('pp_claim_next', 'pp_complete', 'pp_lease_check', 'pp_keep_mark') ORDER BY proname"
        ).fetchall()
        assert calls == [
            (name, False, ["search_path=farm"])
            for name in ("pp_claim_next", "pp_complete", "pp_keep_mark", "pp_lease_check")
        ]

    job_path(logins.uri("writer"), tmp_path)

    with logins.connect("writer") as conn:
        conn.execute("SET search_path TO farm")
        assert conn.execute("SELECT count(*) FROM revisions").fetchone()[0] >= 8
        for table in HISTORY:
            assert refused(conn, f"UPDATE {table} SET {_column(table)} = {_column(table)}"), table
            assert refused(conn, f"DELETE FROM {table}"), table
            assert refused(conn, f"TRUNCATE {table} CASCADE"), table
        assert refused(conn, "UPDATE schema_version SET version = 1")
        assert refused(conn, "DROP TABLE revisions CASCADE")
        assert refused(conn, "DROP SCHEMA farm CASCADE")
        assert refused(conn, "ALTER FUNCTION pp_publish SECURITY INVOKER")
        assert refused(conn, "ALTER FUNCTION pp_commit SECURITY DEFINER")
        assert refused(conn, "ALTER FUNCTION pp_claim_next SECURITY DEFINER")
        assert refused(conn, "ALTER FUNCTION pp_lease_check SECURITY DEFINER")

    with logins.connect("reader") as conn:
        conn.execute("SET search_path TO farm")
        assert conn.execute("SELECT count(*) FROM jobs").fetchone()[0] == 5
        assert refused(conn, "UPDATE jobs SET priority = 1")
        assert refused(conn, "SELECT * FROM pp_set_fingerprint(gen_random_uuid(), 'x', 1, '', 1)")
    with Production.open(logins.uri("reader"), read_only=True) as production:
        assert len(production.jobs().items) == 5


def test_db_roles_gives_an_existing_production_to_pp_owner(cli: Cli, logins: Logins, tmp_path: Path) -> None:
    cli.json("init", logins.uri("dba"))  # made before the roles, by whoever ran init
    cli.json("db-roles", "create", logins.uri("dba"))
    cli.json("db-roles", "create", logins.uri("dba"))  # again: nothing changes, nothing fails
    grant_members(logins)
    with logins.connect("dba") as conn:
        assert owners(conn) == {"pp_owner"}
    job_path(logins.uri("writer"), tmp_path)


def test_db_roles_refuses_a_sqlite_file(cli: Cli, tmp_path: Path) -> None:
    outcome = cli("db-roles", "create", str(tmp_path / "p.pproj"))
    assert outcome.code != 0 and "PostgreSQL" in outcome.stderr


def _column(table: str) -> str:
    return {"activity_edges": "role", "representation_fingerprints": "value", "revision_events": "kind"}.get(
        table, "id"
    )
