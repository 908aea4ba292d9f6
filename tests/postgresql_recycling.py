"""Empty PostgreSQL productions for ``production_factory`` from schemas earlier tests used, reset
to what ``Production.create`` makes, instead of a new schema each time.

A new production's schema costs the server about 100-150 ms of CPU (some 50 tables, their
indexes, functions and triggers, through every migration), and the suite makes one for nearly
every ``[postgresql]`` test: a fifth of the whole suite's CPU went to PostgreSQL, most of it
there. A reset costs a few milliseconds: every table the test wrote emptied (by its size on
disk; the first reset of a session empties them all) and refilled from a pristine
schema the real ``Production.create`` made once per session (the rows a new production has),
its sequences set as there, and, when handed out, the ``production`` row given a new id,
cursor key and creation time (as the SQLite template's copies are: tests/production_template.py).

A schema is reset only when nothing can tell it from a new one:

- no other client is connected to the database (the test's productions are closed, no process
  it started is still connected: each pytest-xdist worker has a server of its own);
- its definitions are the pristine schema's (tables and their columns, indexes, constraints,
  functions with their bodies and settings, triggers and whether they are enabled, owners and
  grants, the schema's own owner and grants): a test that altered or granted anything, or
  made a role own it, leaves it alone.

Otherwise it stays as the test left it, as before. A reused schema keeps its name (a name a
test asked ``production_location`` for before making the production is never given another).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from postproject import FakeClock, Production, ProductionId
from postproject.model.clock import to_micros
from postproject.storage.postgresql.localserver import ADMIN, LocalServer

PRISTINE = "pp_pristine"

# Everything that defines a schema, the schema's own name written as "@" (constraints, index
# definitions and pinned search_paths name it), one text per object, sorted, hashed.
FINGERPRINT = """
WITH s AS (SELECT oid, nspname FROM pg_namespace WHERE nspname = %(schema)s),
parts AS (
    SELECT 'n:' || pg_get_userbyid(n.nspowner) || ':' || coalesce(n.nspacl::text, '') AS part
    FROM pg_namespace n JOIN s ON n.oid = s.oid
    UNION ALL
    SELECT 'c:' || c.relname || ':' || c.relkind::text || ':' || pg_get_userbyid(c.relowner) || ':'
        || coalesce(c.relacl::text, '') || ':' || coalesce(c.reloptions::text, '')
    FROM pg_class c JOIN s ON c.relnamespace = s.oid
    UNION ALL
    SELECT 'a:' || c.relname || ':' || a.attname || ':' || format_type(a.atttypid, a.atttypmod)
        || ':' || a.attnotnull::text || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN s ON c.relnamespace = s.oid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'i:' || pg_get_indexdef(i.indexrelid)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN s ON c.relnamespace = s.oid
    UNION ALL
    SELECT 'k:' || r.relname || ':' || k.conname || ':' || pg_get_constraintdef(k.oid)
    FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid JOIN s ON r.relnamespace = s.oid
    UNION ALL
    SELECT 'p:' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || '):'
        || md5(p.prosrc) || ':' || p.prosecdef::text || ':' || coalesce(p.proconfig::text, '') || ':'
        || pg_get_userbyid(p.proowner) || ':' || coalesce(p.proacl::text, '')
    FROM pg_proc p JOIN s ON p.pronamespace = s.oid
    UNION ALL
    SELECT 't:' || c.relname || ':' || t.tgname || ':' || t.tgenabled::text || ':' || t.tgfoid::regproc::text
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN s ON c.relnamespace = s.oid
    WHERE NOT t.tgisinternal
)
SELECT md5(replace(string_agg(part, '|' ORDER BY part), (SELECT nspname FROM s), '@')) FROM parts
"""


class SchemaRecycler:
    """The pristine schema, the reset schemas ready to be handed out, and the superuser's
    connection to the session's shared database that resets them."""

    def __init__(self, server: LocalServer, database: str) -> None:
        self.server = server
        self.database = database
        self._conn: psycopg.Connection[Any] | None = None
        self._spare: list[str] = []
        self._pristine: str | None = None  # its fingerprint
        self._layout: tuple[list[str], list[str], list[tuple[str, int, bool]]] | None = None
        self._emptied: dict[str, int] | None = None  # each table's size (with indexes) just emptied
        self.reused = 0
        self.kept = 0

    # --- handing out ------------------------------------------------------------------------

    def take(self, location_of: Callable[[str], str], clock: FakeClock) -> tuple[str, Production] | None:
        """A reset schema and its production, opened as ``Production.create(location,
        clock=clock)`` returns one, or None when there is none spare. ``location_of(schema)`` is
        its URI."""
        if not self._spare:
            return None
        schema = self._spare.pop()
        with self._transaction() as conn:
            conn.execute(
                sql.SQL("UPDATE {}.production SET id = %s, cursor_key = %s, created_at = %s").format(
                    sql.Identifier(schema)
                ),
                (uuid.UUID(bytes=ProductionId.new().bytes), os.urandom(32), to_micros(clock.now())),
            )
        self.reused += 1
        return schema, Production.open(location_of(schema), clock=clock, allow_injected_clock=True)

    def give_back(self, schema: str) -> None:
        """Reset ``schema`` for a later test when nothing can tell it from a new one (see the
        module docstring); otherwise leave it as it is."""
        try:
            if not self._alone() or self._fingerprint(schema) != self._pristine_fingerprint():
                self.kept += 1
                return
            with self._transaction() as tx:
                tx.execute(self._reset(schema))
            if self._emptied is None:
                self._emptied = self._sizes(schema)
        except psycopg.Error:  # (a test stopped the server, say): the next production is made anew
            self.kept += 1
            self.close()
            return
        self._spare.append(schema)

    def _alone(self, within: float = 0.1) -> bool:
        """Whether no other client is connected to the database, waiting ``within`` seconds for
        the backends of connections just closed to end (a backend exits after its client left)."""
        deadline = time.monotonic() + within
        while True:
            row = (
                self._connection()
                .execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                )
                .fetchone()
            )
            if row == (0,):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    # --- the pristine schema ----------------------------------------------------------------

    def _pristine_fingerprint(self) -> str:
        if self._pristine is None:
            Production.create(
                self.server.uri(self.database, production=PRISTINE),
                clock=FakeClock(0),
                allow_injected_clock=True,
            ).close()
            self._pristine = self._fingerprint(PRISTINE)
        return self._pristine

    def _reset(self, schema: str) -> sql.Composed:
        """Empty every table of ``schema``, copy in the pristine rows, set the sequences as there
        (one script; triggers off, as in a restore: ``session_replication_role``)."""
        conn = self._connection()
        if self._layout is None:
            tables = [r[0] for r in conn.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace"
                " AND relkind IN ('r', 'p') ORDER BY relname", (PRISTINE,)
            )]  # fmt: skip
            filled = [t for t in tables if conn.execute(
                sql.SQL("SELECT EXISTS (SELECT FROM {}.{})").format(sql.Identifier(PRISTINE), sql.Identifier(t))
            ).fetchone() == (True,)]  # fmt: skip
            sequences = conn.execute(
                "SELECT sequencename, coalesce(last_value, start_value), last_value IS NOT NULL"
                " FROM pg_sequences WHERE schemaname = %s",
                (PRISTINE,),
            ).fetchall()
            self._layout = (tables, filled, sequences)
        tables, filled, sequences = self._layout
        if self._emptied is not None:
            # Only the tables a row was ever written to: a table (and its indexes) of the size it
            # had just emptied never had one. (TRUNCATE costs the server ~1 ms a table, written
            # or not: 29 ms for all of them, most of a reset, and most tests write a few.)
            sizes = self._sizes(schema)
            tables = [t for t in tables if t in filled or sizes.get(t) != self._emptied.get(t)]
        target, pristine = sql.Identifier(schema), sql.Identifier(PRISTINE)
        statements = [
            sql.SQL("SET LOCAL session_replication_role = replica"),
            # (TRUNCATE, not DELETE: empty files, as a new table has, so the planner sees one)
            # (CASCADE: with the tables that reference those, which TRUNCATE demands even if empty)
            sql.SQL("TRUNCATE {} CASCADE").format(
                sql.SQL(", ").join(sql.Composed([target, sql.SQL("."), sql.Identifier(t)]) for t in tables)
            ),
            # what the statistics collector counted for them (scans, rows read) starts again too
            sql.SQL(
                "SELECT pg_stat_reset_single_table_counters(oid) FROM pg_class WHERE relnamespace = {}::regnamespace"
            ).format(sql.Literal(schema)),
            sql.SQL(
                "SELECT pg_stat_reset_single_function_counters(oid) FROM pg_proc WHERE pronamespace = {}::regnamespace"
            ).format(sql.Literal(schema)),
        ]
        statements += [
            sql.SQL("INSERT INTO {}.{} SELECT * FROM {}.{}").format(
                target, sql.Identifier(t), pristine, sql.Identifier(t)
            )
            for t in filled
        ]
        statements += [
            sql.SQL("SELECT setval({}, {}, {})").format(
                sql.Literal(sql.Composed([target, sql.SQL("."), sql.Identifier(name)]).as_string(conn)),
                sql.Literal(value),
                sql.Literal(called),
            )
            for name, value, called in sequences
        ]
        return sql.SQL("; ").join(statements)

    def _sizes(self, schema: str) -> dict[str, int]:
        """Each table's size on disk with its indexes and TOAST (0 pages written: the size a
        TRUNCATE leaves)."""
        rows = self._connection().execute(
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class"
            " WHERE relnamespace = %s::regnamespace AND relkind IN ('r', 'p')",
            (schema,),
        )
        return dict(rows)

    def _fingerprint(self, schema: str) -> str | None:
        row = self._connection().execute(FINGERPRINT, {"schema": schema}).fetchone()
        return None if row is None else row[0]

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(
                host=str(self.server.socket_dir),
                port=self.server.port,
                user=ADMIN,
                dbname=self.database,
                autocommit=True,
                application_name="tests-schema-recycler",
            )
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        conn = self._connection()
        with conn.transaction():
            yield conn
