"""The service's statements, the same on both engines: API tokens, recorded replies, and
registrations by name (:mod:`postproject.engine.service`; schema: ``migrations/0008_service.sql``).

A reader offers :class:`ServiceReader` and a write session :class:`ServiceWriter` as their
``service``. A revision's ``principal`` needs no statement here: SQLite's commit writes it
with the revision, and on PostgreSQL the column's default reads the edit's transaction-local
``postproject.principal`` (:data:`PRINCIPAL`, set in the commit's round trip before
``pp_publish`` inserts the revision).
"""

from __future__ import annotations

from typing import Any, Protocol

from postproject.engine.service import ApiTokenRow, ReplyRow, WorkerRegistration
from postproject.storage.sql.dialect import Dialect, Params

_TOKEN = "SELECT name, role, created_at, expires_at, revoked_at FROM api_tokens"
_REPLY = "SELECT digest, reply, recorded_at FROM recorded_replies WHERE scope = ? AND key = ?"
PRINCIPAL = "SELECT set_config('postproject.principal', %s, true)"  # PostgreSQL's placeholders


class _Reads(Protocol):
    def row(self, sql: str, params: Params = ()) -> Any: ...
    def rows(self, sql: str, params: Params = ()) -> list[Any]: ...


class _Writes(Protocol):
    state_written: bool

    @property
    def dialect(self) -> Dialect: ...

    def one(self, sql: str, params: Params | None = None) -> Any: ...


def _token(row: Any) -> ApiTokenRow | None:
    return (row[0], row[1], row[2], row[3], row[4]) if row is not None else None


def _reply(row: Any) -> ReplyRow | None:
    return (bytes(row[0]), row[1], row[2]) if row is not None else None


class ServiceReader:
    """Committed tokens, replies and registrations (``Reads.service``)."""

    def __init__(self, reads: _Reads) -> None:
        self._reads = reads

    def api_token(self, secret_hash: bytes) -> ApiTokenRow | None:
        return _token(self._reads.row(f"{_TOKEN} WHERE secret_hash = ?", (secret_hash,)))

    def api_tokens(self) -> list[ApiTokenRow]:
        return [row for row in map(_token, self._reads.rows(f"{_TOKEN} ORDER BY name")) if row is not None]

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        return _reply(self._reads.row(_REPLY, (scope, key)))

    def worker_registration(self, name: str) -> WorkerRegistration | None:
        row = self._reads.row("SELECT id, session, capacity, kinds FROM workers WHERE name = ?", (name,))
        return (bytes(row[0]), bytes(row[1]), row[2], row[3]) if row is not None else None


class ServiceWriter:
    """Token and reply writes inside one edit (``WriteSession.service``); stored state."""

    def __init__(self, writes: _Writes) -> None:
        self._writes = writes

    def _one(self, sql: str, params: Params) -> Any:
        return self._writes.one(self._writes.dialect.sql(sql), params)

    def insert_api_token(
        self, name: str, secret_hash: bytes, role: int, created_at: int, expires_at: int | None
    ) -> bool:
        row = self._one(
            "INSERT INTO api_tokens (name, secret_hash, role, created_at, expires_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO NOTHING RETURNING 1",
            (name, secret_hash, role, created_at, expires_at),
        )
        self._writes.state_written = True
        return row is not None

    def revoke_api_token(self, name: str, now: int) -> ApiTokenRow | None:
        row = self._one(
            "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE name = ? "
            "RETURNING name, role, created_at, expires_at, revoked_at",
            (now, name),
        )
        self._writes.state_written = True
        return _token(row)

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        return _reply(self._one(_REPLY, (scope, key)))

    def insert_reply(self, scope: str, key: str, digest: bytes, reply: str, now: int) -> bool:
        row = self._one(
            "INSERT INTO recorded_replies (scope, key, digest, reply, recorded_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (scope, key) DO NOTHING RETURNING 1",
            (scope, key, digest, reply, now),
        )
        self._writes.state_written = True
        return row is not None
