"""Connections: bound to the production's schema, and every failure a clear storage error."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg
import psycopg_pool
import pytest

from postproject import JobRequest, Production, RepresentationKind
from postproject.model.errors import ErrorCode, InvalidArgumentError, PostProjectError, StorageError
from postproject.storage.postgresql import connection, errors, uri
from postproject.storage.postgresql.localserver import LocalServer, free_port
from tests.postgresql_fixtures import Database

WRONG = "not-the-password-7f3a"


def parsed(text: str) -> uri.PostgresUri:
    return uri.parse(text)


def schema_names(server: LocalServer, dbname: str) -> set[str]:
    with psycopg.connect(server.uri(dbname)) as conn:
        return {row[0] for row in conn.execute("SELECT nspname FROM pg_namespace").fetchall()}


def assert_no_secret(error: PostProjectError, *secrets: str) -> None:
    texts = [error.message, str(error), repr(error), str(error.__cause__ or "")]
    for secret in secrets:
        assert all(secret not in text for text in texts), texts


def test_a_connection_searches_only_the_production_schema(postgres_database: Database) -> None:
    target = parsed(postgres_database.uri(production="show_a"))
    with connection.connect(target, application_name="postproject-test") as conn:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # handed over idle
        assert conn.execute("SHOW search_path").fetchone() == ("show_a",)
        assert conn.execute("SHOW application_name").fetchone() == ("postproject-test",)


def test_the_uri_application_name_wins(postgres_database: Database) -> None:
    target = parsed(postgres_database.uri(production="p") + "&application_name=render-node-7")
    with connection.connect(target) as conn:
        assert conn.execute("SHOW application_name").fetchone() == ("render-node-7",)


def test_a_keyword_production_name_is_quoted(postgres_database: Database) -> None:
    target = parsed(postgres_database.uri(production="select"))
    with connection.connect(target) as conn:
        conn.execute('CREATE SCHEMA "select"')
        conn.execute("CREATE TABLE probe (x int)")  # lands in the search path's schema
        assert conn.execute("SELECT to_regclass('\"select\".probe') IS NOT NULL").fetchone() == (True,)


def test_every_pooled_connection_is_bound_to_the_schema(postgres_database: Database) -> None:
    target = parsed(postgres_database.uri(production="pooled"))
    pool = connection.open_pool(target, application_name="postproject-pool", min_size=2, max_size=3)
    try:
        seen: list[tuple[object, ...]] = []
        held = threading.Barrier(3)

        def use() -> None:
            with pool.connection() as conn:
                seen.append(
                    tuple(
                        conn.execute("SELECT current_setting('search_path'), pg_backend_pid()").fetchone()
                        or ()
                    )
                )
                held.wait(timeout=30)

        threads = [threading.Thread(target=use) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert {row[0] for row in seen} == {"pooled"}
        assert len({row[1] for row in seen}) == 3  # three distinct sessions, each configured
    finally:
        pool.close()


def test_reads_start_on_the_callers_connection_and_open_a_pool_only_when_needed(
    postgres_database: Database, postgres_server: LocalServer
) -> None:
    """The caller's connection serves one thread at a time; a second thread reading meanwhile
    opens the pool (bound to the schema too); the first, once lost, gives way to the pool."""
    target = parsed(postgres_database.uri(production="lazy"))
    first = connection.connect(target, autocommit=True)
    first_pid = first.info.backend_pid
    pools: list[connection.Pool] = []

    def make_pool() -> connection.Pool:
        pools.append(connection.open_pool(target, autocommit=True, check=False, max_size=2))
        return pools[-1]

    reads = connection.Connections(first, make_pool)
    try:
        with reads.connection() as conn:
            assert conn is first
        with reads.connection() as conn:  # given back idle: the same again, still no pool
            assert conn is first
        assert pools == []
        with reads.connection() as one, reads.connection() as two:  # (as two threads at once)
            assert one is first and two is not first
            assert two.execute("SHOW search_path").fetchone() == ("lazy",)
        assert len(pools) == 1
        with postgres_server.admin() as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (first_pid,))
        reads.check()  # (as a read that found its connection lost does)
        with reads.connection() as conn:
            assert conn is not first and conn.execute("SELECT 1").fetchone() == (1,)
        assert first.closed and len(pools) == 1
    finally:
        reads.close()
    assert first.closed
    with pytest.raises(psycopg_pool.PoolClosed), reads.connection():
        pass


def test_a_read_only_open_connects_once(postgres_database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening read-only (as the monitor's readers do) makes one connection, not one to check the
    schema and another for the reads: a connection is a server process and a handshake, the
    largest part of the time to a production's first page."""
    location = postgres_database.uri(production="once")
    Production.create(location).close()
    connects: list[str] = []
    connect = psycopg.Connection.connect.__func__  # type: ignore[attr-defined]

    def counted(cls: type[psycopg.Connection[object]], *args: object, **kwargs: object) -> object:
        connects.append(threading.current_thread().name)
        return connect(cls, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(counted))  # (the pool's)
    monkeypatch.setattr(psycopg, "connect", psycopg.Connection.connect)  # (an alias made at import)
    with Production.open(location, read_only=True) as production:
        assert production.jobs(limit=10).items == ()
        assert production.latest_sequence() == 0
    assert len(connects) == 1, connects


def test_an_open_and_its_first_page_read_the_production_row_once(
    postgres_database: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The production's id and cursor key never change: the first page (whose jobs carry the id)
    does not read them again after the open."""
    location = postgres_database.uri(production="row_once")
    clip = tmp_path / "a.mov"
    clip.write_bytes(b"a")
    with Production.create(location) as production, production.edit() as tx:
        asset = tx.create_asset("A")
        rep = tx.add_representation(asset, RepresentationKind.ORIGINAL, clip)
        tx.request_job(JobRequest("org.example:k", (rep,), asset, RepresentationKind.PROXY))
        tx.commit()
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def recorded(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, str) else repr(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recorded)
    with Production.open(location, read_only=True) as production:
        assert len(production.jobs(limit=10).items) == 1
    assert sum("FROM production" in text for text in sent) == 1, sent


def test_a_pool_with_no_free_connection_is_busy(postgres_database: Database) -> None:
    target = parsed(postgres_database.uri(production="p"))
    pool = connection.open_pool(target, min_size=1, max_size=1)
    try:
        with pool.connection():
            assert translate_failure(target, lambda: pool.getconn(timeout=0.1)) == "busy"
    finally:
        pool.close()


def test_a_pool_that_waits_in_vain_for_a_stopped_server_says_unreachable_not_busy() -> None:
    """A worker still starting when the server stopped waited for its pool's connection and
    logged "busy" (the outage test, under load): the pool gets none because the server is gone."""
    with LocalServer() as server:
        target = parsed(server.uri(production="p"))
        pool = connection.open_pool(target, min_size=0, max_size=1)
        try:
            server.stop()
            assert translate_failure(target, lambda: pool.getconn(timeout=0.5)) == "unreachable"
        finally:
            pool.close()


def test_a_closed_port_is_unreachable(postgres_server: LocalServer) -> None:
    target = parsed(postgres_server.uri(port=free_port(), production="p"))
    for attempt in (lambda: connection.connect(target), lambda: connection.open_pool(target, timeout=5)):
        with pytest.raises(StorageError) as raised:
            attempt()
        assert raised.value.code is ErrorCode.STORAGE
        assert raised.value.reason == "unreachable"
        assert "Connection refused" in raised.value.message
        assert target.display in raised.value.message
        assert_no_secret(raised.value, postgres_server.password)


def test_a_wrong_password_is_auth_failed_and_never_echoed(postgres_database: Database) -> None:
    server = postgres_database.server
    before = schema_names(server, postgres_database.name)
    target = parsed(postgres_database.uri(password=WRONG, production="p"))
    for attempt in (lambda: connection.connect(target), lambda: connection.open_pool(target)):
        with pytest.raises(StorageError) as raised:
            attempt()
        assert raised.value.reason == "auth_failed"
        assert "password authentication failed" in raised.value.message
        assert_no_secret(raised.value, WRONG)
    assert schema_names(server, postgres_database.name) == before


def test_no_password_at_all_is_auth_failed(
    postgres_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    target = parsed(f"postgresql://postproject@127.0.0.1:{postgres_server.port}/postgres")
    with pytest.raises(StorageError) as raised:
        connection.connect(target)
    assert raised.value.reason == "auth_failed"


def test_a_password_from_pgpassword_works_and_is_never_echoed(
    postgres_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = f"postgresql://postproject@127.0.0.1:{postgres_server.port}/postgres"
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    with connection.connect(parsed(bare)) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("postproject",)
    monkeypatch.setenv("PGPASSWORD", WRONG)
    with pytest.raises(StorageError) as raised:
        connection.connect(parsed(bare))
    assert raised.value.reason == "auth_failed"
    assert_no_secret(raised.value, WRONG)


def test_a_missing_database_is_database_missing(postgres_server: LocalServer) -> None:
    with pytest.raises(StorageError) as raised:
        connection.connect(parsed(postgres_server.uri("no_such_database")))
    assert raised.value.reason == "database_missing"
    assert "no_such_database" in raised.value.message


@pytest.mark.parametrize("option", ["sslmode=bogus", "target_session_attrs=bogus", "keepalives=abc"])
def test_a_connection_option_libpq_refuses_is_invalid_argument(
    postgres_server: LocalServer, option: str
) -> None:
    target = parsed(f"{postgres_server.uri(production='p')}&{option}")
    with pytest.raises(InvalidArgumentError) as raised:
        connection.connect(target)
    assert raised.value.reason == "malformed_uri"
    assert option.partition("=")[0] in raised.value.message
    assert_no_secret(raised.value, postgres_server.password)


def test_a_malformed_uri_fails_before_any_connection() -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        parsed(f"postgresql://postproject:{WRONG}@127.0.0.1:1/db?production=x;drop")
    assert raised.value.reason == "invalid_production_name"
    assert_no_secret(raised.value, WRONG)


def test_errors_after_connecting_keep_their_meaning(postgres_database: Database) -> None:
    target = parsed(postgres_database.uri(production="public_probe"))
    with connection.connect(target, autocommit=True) as conn, connection.connect(target) as other:
        conn.execute("CREATE SCHEMA public_probe")
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, name text)")
        conn.execute("INSERT INTO t VALUES (1, 'a')")

        # busy: a row lock not obtained within lock_timeout
        other.execute("SELECT * FROM t WHERE id = 1 FOR UPDATE")
        conn.execute("SET lock_timeout = '50ms'")
        assert (
            translate_failure(target, lambda: conn.execute("UPDATE t SET name = 'b' WHERE id = 1")) == "busy"
        )
        other.rollback()

        # read_only: a read-only transaction refuses writes
        conn.execute("SET default_transaction_read_only = on")
        assert translate_failure(target, lambda: conn.execute("INSERT INTO t VALUES (2, 'c')")) == "read_only"
        conn.execute("SET default_transaction_read_only = off")

        # a NUL character cannot be stored in text: invalid_argument, not a crash
        with pytest.raises(InvalidArgumentError), errors.translated(target):
            conn.execute("INSERT INTO t VALUES (3, %s)", ("a\x00b",))

        # connection_lost: the server ends the session
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        other.commit()
        assert translate_failure(target, lambda: conn.execute("SELECT 1")) == "connection_lost"
        # ... and so is every later use of it (psycopg: "the connection is closed")
        assert translate_failure(target, lambda: conn.execute("SELECT 1")) == "connection_lost"


def test_permission_denied_is_its_own_reason(postgres_server: LocalServer) -> None:
    # The client role does not own the maintenance database "postgres": it may not create schemas there.
    target = parsed(postgres_server.uri("postgres", production="forbidden"))
    with connection.connect(target, autocommit=True) as conn:
        assert (
            translate_failure(target, lambda: conn.execute("CREATE SCHEMA forbidden")) == "permission_denied"
        )


def translate_failure(target: uri.PostgresUri, action: object) -> str | None:
    with pytest.raises(StorageError) as raised, errors.translated(target):
        action()  # type: ignore[operator]
    return raised.value.reason
