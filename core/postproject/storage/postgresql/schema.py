"""A production's schema: creation from the baseline and the numbered migrations after it
(``migrations/NNNN_name.sql``, :mod:`postproject.storage.sql.versions`).

The numbers run parallel to SQLite's (0007, the baseline, is SQLite's 0007 in PostgreSQL's
dialect). The schema's ``schema_version`` table holds the version applied, as SQLite's
``user_version`` does. Every change runs in one transaction that first takes a transaction-level advisory
lock on the production's name, so processes that race to create or migrate the same
production queue up and the later ones find the work done; nothing is left half-applied.

A schema that exists but holds no ``schema_version`` is adopted when it is empty (a
database administrator may create it beforehand with the grants a studio wants) and refused
otherwise (``storage`` with reason ``not_a_production``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from postproject.model.errors import AlreadyExistsError, MigrationError, NotFoundError, Reason, StorageError
from postproject.storage.postgresql import roles
from postproject.storage.postgresql.uri import check_production_name
from postproject.storage.sql import versions

MIGRATIONS = versions.numbered("postproject.storage.postgresql.migrations")
LATEST = MIGRATIONS.latest
LOCK_CLASS = 0x50505231  # "PPR1", SQLite's application_id: the first key of our advisory locks

Connection = psycopg.Connection[Any]


def read_version(conn: Connection, production: str) -> int | None:
    """The production's schema version, ``None`` when there is no such schema (or it is empty).

    Leaves ``conn`` in the transaction state it found it in (idle stays idle).
    """
    name = check_production_name(production)
    with conn.transaction():
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'schema_version'),"
            " EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid)"
            " OR EXISTS (SELECT 1 FROM pg_proc p WHERE p.pronamespace = n.oid)"
            " FROM pg_namespace n WHERE n.nspname = %s",
            (name,),
        ).fetchone()
        if row is None:
            return None
        has_version, has_objects = row
        if not has_version:
            if has_objects:
                raise StorageError(
                    f"schema {name!r} exists but does not hold a PostProject production",
                    reason=Reason.NOT_A_PRODUCTION,
                )
            return None
        version = conn.execute(
            sql.SQL("SELECT version FROM {}.schema_version").format(sql.Identifier(name))
        ).fetchone()
    if version is None:
        raise StorageError(f"schema {name!r} has an empty schema_version", reason=Reason.NOT_A_PRODUCTION)
    return int(version[0])


def lock(conn: Connection, production: str) -> None:
    """Take the production's advisory lock until the end of the current transaction."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS, check_production_name(production))
    )


def migrate(conn: Connection, production: str, current: int) -> None:
    """Apply the migrations after ``current`` inside the caller's transaction (which holds :func:`lock`).

    ``current == 0`` creates the schema and its ``schema_version`` where they do not exist yet,
    then the baseline; otherwise ``current`` is at least the baseline (:func:`versions.check`).
    """
    assert conn.info.transaction_status == TransactionStatus.INTRANS, "migrations run in a transaction"
    schema = sql.Identifier(check_production_name(production))
    try:
        exists = conn.execute("SELECT to_regnamespace(%s) IS NOT NULL", (production,)).fetchone()
        if current == 0 and not (exists and exists[0]):  # (IF NOT EXISTS still needs CREATE on the database)
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
        owned = roles.act_as_owner(conn, production)  # a schema given to pp_owner changes only as it
        if current == 0:
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.schema_version"
                    " (singleton smallint PRIMARY KEY CHECK (singleton = 1),"
                    " version integer NOT NULL CHECK (version >= 0))"
                ).format(schema)
            )
            conn.execute(
                sql.SQL("INSERT INTO {}.schema_version VALUES (1, 0) ON CONFLICT DO NOTHING").format(schema)
            )
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(schema))
        for number, script in MIGRATIONS.after(current):
            conn.execute(script)  # several statements, no parameters: one round trip
            conn.execute(sql.SQL("UPDATE {}.schema_version SET version = %s").format(schema), (number,))
        if owned:  # what the migrations added is granted like the rest
            for statement in roles.grants(production):
                conn.execute(statement)
    except psycopg.Error as exc:
        raise MigrationError(
            f"migrating production {production!r} to schema version {MIGRATIONS.latest} failed: {exc}"
        ) from exc


def create(conn: Connection, production: str, initialise: Callable[[Connection], None] | None = None) -> None:
    """Create the production's schema at the latest version, then run ``initialise``, in one transaction.

    ``already_exists`` when the production exists (at any version).
    """
    with _transaction(conn):
        lock(conn, production)
        if read_version(conn, production) is not None:
            raise AlreadyExistsError(f"production {production!r} already exists in this database")
        migrate(conn, production, 0)
        if initialise is not None:
            initialise(conn)


def upgrade(conn: Connection, production: str, *, read_only: bool = False) -> int:
    """Check an existing production's version, migrating an older one; return the version now.

    Refused before anything is written: ``not_found`` when there is no such production;
    ``storage`` (``not_a_production``) at version 0; ``migration`` when a development build
    made it before the baseline; ``unsupported`` when it is newer than this release, or older
    and ``read_only``.
    """
    with _transaction(conn):
        version = _checked(production, read_version(conn, production), read_only=read_only)
    if version == MIGRATIONS.latest:
        return version
    with _transaction(conn):
        lock(conn, production)
        version = _checked(production, read_version(conn, production), read_only=read_only)
        migrate(conn, production, version)
    return MIGRATIONS.latest


def ensure(conn: Connection, production: str) -> int:
    """Create the production's schema when absent, migrate it when older; return the version found.

    0 means it was created here (or found empty). ``migration`` when a development build made
    it before the baseline; ``unsupported`` when it is newer than this release.
    """
    with _transaction(conn):
        lock(conn, production)
        found = read_version(conn, production) or 0
        if found:
            versions.check(repr(production), found, MIGRATIONS.latest, read_only=False)
        migrate(conn, production, found)
    return found


def _checked(production: str, version: int | None, *, read_only: bool) -> int:
    if version is None:
        raise NotFoundError(f"no production {production!r} in this database")
    versions.check(repr(production), version, MIGRATIONS.latest, read_only=read_only)
    return version


def _transaction(conn: Connection) -> AbstractContextManager[psycopg.Transaction]:
    """A top-level transaction (never a savepoint inside someone else's)."""
    assert conn.info.transaction_status == TransactionStatus.IDLE, "schema changes need an idle connection"
    return conn.transaction()
