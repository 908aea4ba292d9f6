"""What differs between the engines' SQL, for the statements both share.

Shared statements are written once, in SQLite's placeholders (``?`` and ``:name``);
:meth:`Dialect.sql` gives each engine its own (psycopg's ``%s`` and ``%(name)s``, with a
literal ``%`` doubled), once per statement text. Everything else a shared statement needs to
say differently goes through the dialect too: how an id is bound (SQLite takes 16 bytes,
PostgreSQL a ``uuid``), how a list of values is matched (``IN (?, ?, ...)`` or ``= ANY(?)``),
which index a statement pins (SQLite's ``INDEXED BY``; PostgreSQL's planner needs none), and
the few expressions and column lists written apart (:class:`Dialect`'s fields).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

Params = Sequence[Any] | dict[str, Any]
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class Dialect:
    """One engine's way of saying what the shared statements say."""

    name: str
    #: ``True``: psycopg's ``%s`` / ``%(name)s`` placeholders; ``False``: SQLite's ``?`` / ``:name``.
    pyformat: bool
    #: one id as a statement parameter
    id: Callable[[bytes], Any]
    #: a list of ids as one parameter (``= ANY(?)``), or None: each id its own ``?`` (``IN (...)``)
    id_array: Callable[[Iterable[bytes]], Any] | None
    #: ``INDEXED BY`` hints are written (SQLite pins the index of its hot statements)
    index_hints: bool
    #: a representation's columns (``rows.REPRESENTATION_COLUMNS``: its fingerprints as JSON text)
    representation_columns: str
    #: one id of a group whose ids are all equal, as an aggregate (PostgreSQL has no min(uuid))
    any_id: str
    #: ``WITH RECURSIVE ... UNION ... LIMIT`` walks in SQLite's order (else breadth first, by query)
    recursive_walk: bool

    def sql(self, text: str) -> str:
        """``text`` (SQLite's placeholders) in this engine's placeholders."""
        return _pyformat(text) if self.pyformat else text

    def indexed_by(self, index: str) -> str:
        """`` INDEXED BY index`` where hints are written (after a table name), else nothing."""
        return f" INDEXED BY {index}" if self.index_hints else ""

    def in_ids(self, column: str, ids: Sequence[bytes]) -> tuple[str, list[Any]]:
        """``column`` is one of ``ids``: (the condition, its parameters)."""
        if self.id_array is not None:
            return f"{column} = ANY(?)", [self.id_array(ids)]
        return f"{column} IN ({','.join('?' * len(ids))})", list(ids)

    def in_values(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values`` (text or numbers): (the condition, its parameters)."""
        if self.id_array is not None:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({','.join('?' * len(values))})", list(values)


@functools.lru_cache(maxsize=4096)
def _pyformat(text: str) -> str:
    return _NAMED.sub(r"%(\1)s", text.replace("%", "%%").replace("?", "%s"))


class Runner(Protocol):
    """Read statements on an engine's connections (its own placeholders: :meth:`Dialect.sql`)."""

    dialect: Dialect

    def snapshot(self) -> AbstractContextManager[object]:
        """One consistent read around several statements (nested uses share it)."""
        ...

    def all(self, sql: str, params: Params = ()) -> list[Any]: ...
    def one(self, sql: str, params: Params = ()) -> Any: ...
