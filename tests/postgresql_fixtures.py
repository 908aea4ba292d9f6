"""PostgreSQL fixtures (a pytest plugin loaded by tests/conftest.py).

- ``postgres_server``: one throwaway server for the session, started on first use
  (:class:`postproject.storage.postgresql.localserver.LocalServer`). Without PostgreSQL's
  server binaries the tests that use it are skipped, except under ``CI=true``, where they fail.
  Under pytest-xdist every worker is a session of its own, so each starts its own server (in
  its own directory, on its own free port): about 2.5 s each, once, against the coordination
  one shared server would need (who starts it, who stops it last), and no test sees another
  worker's databases, schemas or connections.
- ``postgres_uri``: a ``postgresql://`` URI naming a production no other test uses, in a
  database shared by the session (the production itself is not created): the cheap default.
- ``postgres_database``: a fresh database of its own, dropped afterwards, for tests that look
  at a whole database.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from postproject.storage.postgresql.localserver import LocalServer, find_bindir, interrupt_on_sigterm
from tests.postgresql_recycling import SchemaRecycler

SHARED_DATABASE = "postproject_tests"
_numbers = itertools.count(1)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


@dataclass(frozen=True)
class Database:
    """A database on the session's server, owned by the client role."""

    server: LocalServer
    name: str

    def uri(
        self, production: str | None = None, *, password: str | None = None, port: int | None = None
    ) -> str:
        return self.server.uri(self.name, production=production, password=password, port=port)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalServer]:
    if find_bindir() is None:
        message = (
            "no PostgreSQL server binaries (initdb, pg_ctl, postgres): install them "
            "(python3 dev.py test does as root; Debian: apt-get install postgresql)"
        )
        if in_ci():
            pytest.fail(f"{message}; CI=true, so this is a failure, not a skip", pytrace=False)
        pytest.skip(message)
    with interrupt_on_sigterm(), LocalServer() as server:
        server.create_database(SHARED_DATABASE)
        yield server


@pytest.fixture(scope="session")
def schema_recycler(postgres_server: LocalServer) -> Iterator[SchemaRecycler]:
    """Reset schemas for ``production_factory`` (tests/postgresql_recycling.py)."""
    recycler = SchemaRecycler(postgres_server, SHARED_DATABASE)
    yield recycler
    recycler.close()


@pytest.fixture
def postgres_uri(postgres_server: LocalServer, request: pytest.FixtureRequest) -> str:
    slug = re.sub(r"[^a-z0-9_]+", "_", request.node.name.lower())
    production = f"t{next(_numbers)}_{slug}"[:63].rstrip("_")
    return postgres_server.uri(SHARED_DATABASE, production=production)


@pytest.fixture
def postgres_database(postgres_server: LocalServer) -> Iterator[Database]:
    name = f"test_{os.getpid()}_{next(_numbers)}"
    postgres_server.create_database(name)
    yield Database(postgres_server, name)
    postgres_server.drop_database(name)
