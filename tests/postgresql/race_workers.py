"""Process bodies for the schema races (top-level functions: spawned processes import them)."""

from __future__ import annotations

from multiprocessing.synchronize import Barrier

from postproject.errors import PostProjectError
from postproject.storage.postgresql import connection, schema, uri


def ensure_each(uri_text: str, names: list[str], barrier: Barrier) -> list[int]:
    """For each name: wait for the other process, then create-or-migrate it; return versions found."""
    with connection.connect(uri.parse(uri_text)) as conn:
        found = []
        for name in names:
            barrier.wait(timeout=60)
            found.append(schema.ensure(conn, name))
        return found


def create_each(uri_text: str, names: list[str], barrier: Barrier) -> list[str]:
    """For each name: wait for the other process, then create it; return "created" or the error code."""
    with connection.connect(uri.parse(uri_text)) as conn:
        outcomes = []
        for name in names:
            barrier.wait(timeout=60)
            try:
                schema.create(conn, name)
                outcomes.append("created")
            except PostProjectError as exc:
                outcomes.append(exc.code.value)
        return outcomes
