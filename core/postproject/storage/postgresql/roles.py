"""The database roles of a PostgreSQL production: ``pp_owner``, ``pp_writer``, ``pp_reader``.

``pp_owner`` owns the production's schema and everything in it; only migrations (``postproject
init``, an upgrade) act as it. ``pp_writer`` is what the farm's writes need (workers, the
service, the monitor's actions): every table's rows, except history (revisions,
revision_events, activities, activity_edges, representation_fingerprints), which it may only
insert and read: never UPDATE, DELETE or TRUNCATE. The two places where an edit must change a
history row (numbering what it wrote, replacing a fingerprint) are functions owned by
``pp_owner`` that run as it (SECURITY DEFINER with a fixed search_path, migration 0011);
``pp_writer`` may execute every function of the schema. ``pp_reader`` reads (SELECT, LISTEN).

The three are group roles (NOLOGIN): a login role gets one through membership (``GRANT
pp_writer TO render``). Roles belong to the cluster; the grants to one production (schema).
Everything here is idempotent: :func:`statements` can run again after an upgrade (a later
migration's new tables get their grants from the default privileges it sets, and a new
history table from running it again).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from postproject.storage.postgresql.uri import check_production_name

OWNER = "pp_owner"
WRITER = "pp_writer"
READER = "pp_reader"
ROLES = (OWNER, WRITER, READER)
#: tables whose rows are history: pp_writer may insert and read them, never change them
HISTORY = ("revisions", "revision_events", "activities", "activity_edges", "representation_fingerprints")

_CREATE_ROLES = """DO $$
BEGIN
    IF to_regrole('pp_owner') IS NULL THEN CREATE ROLE pp_owner NOLOGIN; END IF;
    IF to_regrole('pp_writer') IS NULL THEN CREATE ROLE pp_writer NOLOGIN; END IF;
    IF to_regrole('pp_reader') IS NULL THEN CREATE ROLE pp_reader NOLOGIN; END IF;
END
$$"""

# Everything in the schema owned by pp_owner (tables, sequences, views, functions), whatever
# the migrations made; run by a superuser or a member of both the old owner and pp_owner.
_OWN_ALL = """DO $$
DECLARE
    o text;
BEGIN
    FOR o IN SELECT c.oid::regclass::text FROM pg_class c
             WHERE c.relnamespace = {schema}::regnamespace AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
               AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                               AND d.objid = c.oid AND d.deptype IN ('a', 'i'))  -- moves with its table
    LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO pp_owner', o);
    END LOOP;
    FOR o IN SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = {schema}::regnamespace
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO pp_owner', o);
    END LOOP;
END
$$"""

# History append-only for pp_writer, and the schema's version and identity its owner's: for
# the tables that exist (an empty schema, made before ``init``, has none yet).
_APPEND_ONLY = (
    """DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY["""
    + ", ".join(f"'{t}'" for t in HISTORY)
    + """] LOOP
        IF to_regclass(format('%I.%I', {schema}, t)) IS NOT NULL THEN
            EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I.%I FROM pp_writer', {schema}, t);
        END IF;
    END LOOP;
    FOREACH t IN ARRAY ARRAY['schema_version', 'production'] LOOP
        IF to_regclass(format('%I.%I', {schema}, t)) IS NOT NULL THEN
            EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %I.%I FROM pp_writer', {schema}, t);
        END IF;
    END LOOP;
END
$$"""
)


def statements(production: str, database: str) -> list[sql.SQL | sql.Composed]:
    """The SQL that creates the roles and gives them the production ``production`` (a schema of
    ``database``), creating the (empty) schema when it does not exist yet: for
    ``db-roles create``, or printed for a database administrator to run."""
    name = check_production_name(production)
    schema = sql.Identifier(name)
    return [
        sql.SQL(_CREATE_ROLES),
        sql.SQL("GRANT CONNECT ON DATABASE {} TO pp_owner, pp_writer, pp_reader").format(
            sql.Identifier(database)
        ),
        sql.SQL(
            "CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public"
        ),  # the baseline's; pp_owner cannot
        sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION pp_owner").format(schema),
        sql.SQL("ALTER SCHEMA {} OWNER TO pp_owner").format(schema),
        sql.SQL(_OWN_ALL).format(schema=sql.Literal(name)),
        *grants(name),
    ]


def grants(production: str) -> list[sql.SQL | sql.Composed]:
    """The grants of the production's schema to pp_writer and pp_reader, run by its owner (the
    end of every migration of a schema that pp_owner owns runs them again)."""
    name = check_production_name(production)
    schema = sql.Identifier(name)
    return [
        sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(schema),
        sql.SQL("GRANT USAGE ON SCHEMA {} TO pp_writer, pp_reader").format(schema),
        sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO pp_writer, pp_reader").format(schema),
        sql.SQL("GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO pp_writer").format(schema),
        sql.SQL(_APPEND_ONLY).format(schema=sql.Literal(name)),
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO pp_writer").format(schema),
        sql.SQL("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {} TO pp_writer").format(schema),
        sql.SQL(
            "ALTER DEFAULT PRIVILEGES FOR ROLE pp_owner IN SCHEMA {} GRANT SELECT ON TABLES TO pp_writer, pp_reader"
        ).format(schema),
        sql.SQL(
            "ALTER DEFAULT PRIVILEGES FOR ROLE pp_owner IN SCHEMA {} GRANT INSERT, UPDATE, DELETE ON TABLES TO pp_writer"
        ).format(schema),
        sql.SQL(
            "ALTER DEFAULT PRIVILEGES FOR ROLE pp_owner IN SCHEMA {} GRANT EXECUTE ON FUNCTIONS TO pp_writer"
        ).format(schema),
    ]


def script(conn: psycopg.Connection[Any], production: str, database: str) -> str:
    """:func:`statements` as one SQL script (``db-roles create --sql``)."""
    return "".join(f"{s.as_string(conn)};\n" for s in statements(production, database))


def create(conn: psycopg.Connection[Any], production: str, database: str) -> None:
    """Run :func:`statements` in one transaction (the connection's role needs CREATEROLE and
    the right to give the schema to pp_owner: a superuser, or the database's owner)."""
    with conn.transaction():
        for statement in statements(production, database):
            conn.execute(statement)


def act_as_owner(conn: psycopg.Connection[Any], production: str) -> bool:
    """In the caller's transaction: when pp_owner owns the production's schema, act as pp_owner
    until the transaction ends (``SET LOCAL ROLE``: what a migration makes is pp_owner's) and
    return True; a role that is not a member of pp_owner is left as it is (and is refused by
    the server what only the owner may do)."""
    if not owned_by_owner(conn, production):
        return False
    row = conn.execute("SELECT pg_has_role(current_user, 'pp_owner', 'MEMBER')").fetchone()
    if row is not None and row[0]:
        conn.execute("SET LOCAL ROLE pp_owner")
    return True


def owned_by_owner(conn: psycopg.Connection[Any], production: str) -> bool:
    """The production's schema exists and pp_owner owns it (then its migrations run as pp_owner)."""
    row = conn.execute(
        "SELECT n.nspowner = to_regrole('pp_owner') FROM pg_namespace n WHERE n.nspname = %s",
        (check_production_name(production),),
    ).fetchone()
    return bool(row is not None and row[0])
