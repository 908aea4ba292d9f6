"""Values across the driver: ids as 16-byte ``bytes``, JSON as its stored text.

The engine interface passes ids as ``bytes``; PostgreSQL stores them as ``uuid``. Wrapping an
id in :class:`Id` sends it as a uuid (binary, no text round trip), and every ``uuid`` column
loads as ``bytes``, so rows map to the domain exactly as SQLite's do (the same row
functions, :mod:`postproject.storage.rows`). ``json`` columns load as their text,
which the row functions parse as they parse SQLite's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from psycopg import adapt, postgres
from psycopg.pq import Format

from postproject.storage.postgresql.rows import REPRESENTATION_COLUMNS
from postproject.storage.sql.dialect import Dialect

UUID_OID = postgres.types["uuid"].oid
UUID_ARRAY_OID = postgres.types["uuid"].array_oid


class Id(bytes):
    """A 16-byte id sent as a PostgreSQL ``uuid``."""

    __slots__ = ()


def ids(values: Iterable[bytes]) -> list[Id]:
    """A list of ids for a ``uuid[]`` parameter."""
    return [Id(v) for v in values]


def optional(value: bytes | None) -> Id | None:
    return Id(value) if value is not None else None


# The shared statements (postproject.storage.sql) in PostgreSQL's dialect: ids bound as uuid,
# id lists as one uuid[] (``= ANY(%s)``), no index hints (the planner picks them; see
# pipeline.INDEX_PLANS), and walks breadth first (a recursive query does not keep SQLite's order).
DIALECT = Dialect(
    name="postgresql",
    pyformat=True,
    id=Id,
    id_array=ids,
    index_hints=False,
    representation_columns=REPRESENTATION_COLUMNS,
    any_id="(array_agg({}))[1]",
    recursive_walk=False,
)


class _IdBinaryDumper(adapt.Dumper):
    oid = UUID_OID
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        return bytes(obj)


class _IdTextDumper(adapt.Dumper):
    oid = UUID_OID

    def dump(self, obj: Any) -> bytes:
        return str(uuid.UUID(bytes=bytes(obj))).encode("ascii")


class _IdBinaryLoader(adapt.Loader):
    format = Format.BINARY

    def load(self, data: Any) -> bytes:
        return bytes(data)


class _IdTextLoader(adapt.Loader):
    def load(self, data: Any) -> bytes:
        return uuid.UUID(bytes(data).decode("ascii")).bytes


class _TextLoader(adapt.Loader):
    def load(self, data: Any) -> str:
        return bytes(data).decode("utf-8")


class _BinaryTextLoader(_TextLoader):
    format = Format.BINARY


def configure(conn: Any) -> None:
    """Register the adaptations above on one connection."""
    adapters = conn.adapters
    # The dumper registered last serves ``%s``: the binary one (16 bytes as they are; an id
    # list goes as a binary uuid[]), so no id is formatted as text and parsed back.
    adapters.register_dumper(Id, _IdTextDumper)
    adapters.register_dumper(Id, _IdBinaryDumper)
    adapters.register_loader("uuid", _IdTextLoader)
    adapters.register_loader("uuid", _IdBinaryLoader)
    for name in ("json",):
        adapters.register_loader(name, _TextLoader)
        adapters.register_loader(name, _BinaryTextLoader)
