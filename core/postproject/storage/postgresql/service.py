"""The service's statements on PostgreSQL: API tokens, recorded replies, registrations by
name (:mod:`postproject.engine.service`; schema: ``migrations/0008_service.sql``).

A revision's ``principal`` needs no statement of its own: the column's default reads the
edit's transaction-local ``postproject.principal``, which :data:`PRINCIPAL` sets in
the commit's round trip (before ``pp_publish`` inserts the revision).
"""

from __future__ import annotations

from typing import Any, Protocol

from postproject.engine.service import ApiTokenRow, ReplyRow, WorkerRegistration

_TOKEN = "SELECT name, role, created_at, expires_at, revoked_at FROM api_tokens"
_REPLY = "SELECT digest, reply, recorded_at FROM recorded_replies WHERE scope = %s AND key = %s"
PRINCIPAL = "SELECT set_config('postproject.principal', %s, true)"


class _Reader(Protocol):
    def one(self, sql: str, params: tuple[Any, ...] = ()) -> Any: ...
    def all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...


class _Session(Protocol):
    state_written: bool

    def one(self, sql: str, params: Any = None) -> Any: ...


def _token(row: Any) -> ApiTokenRow | None:
    return (row[0], row[1], row[2], row[3], row[4]) if row is not None else None


def _reply(row: Any) -> ReplyRow | None:
    return (bytes(row[0]), row[1], row[2]) if row is not None else None


class ServiceReader:
    """Committed tokens, replies and registrations through the production's read pool."""

    def __init__(self, reader: _Reader) -> None:
        self._reader = reader

    def api_token(self, secret_hash: bytes) -> ApiTokenRow | None:
        return _token(self._reader.one(f"{_TOKEN} WHERE secret_hash = %s", (secret_hash,)))

    def api_tokens(self) -> list[ApiTokenRow]:
        return [row for row in map(_token, self._reader.all(f"{_TOKEN} ORDER BY name")) if row is not None]

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        return _reply(self._reader.one(_REPLY, (scope, key)))

    def worker_registration(self, name: str) -> WorkerRegistration | None:
        row = self._reader.one("SELECT id, session, capacity, kinds FROM workers WHERE name = %s", (name,))
        return (bytes(row[0]), bytes(row[1]), row[2], row[3]) if row is not None else None


class ServiceWriter:
    """Token and reply writes inside one edit (its transaction on the write connection)."""

    def __init__(self, session: _Session) -> None:
        self._session = session

    def insert_api_token(
        self, name: str, secret_hash: bytes, role: int, created_at: int, expires_at: int | None
    ) -> bool:
        row = self._session.one(
            "INSERT INTO api_tokens (name, secret_hash, role, created_at, expires_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING RETURNING 1",
            (name, secret_hash, role, created_at, expires_at),
        )
        self._session.state_written = True
        return row is not None

    def revoke_api_token(self, name: str, now: int) -> ApiTokenRow | None:
        row = self._session.one(
            "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, %s) WHERE name = %s "
            "RETURNING name, role, created_at, expires_at, revoked_at",
            (now, name),
        )
        self._session.state_written = True
        return _token(row)

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        return _reply(self._session.one(_REPLY, (scope, key)))

    def insert_reply(self, scope: str, key: str, digest: bytes, reply: str, now: int) -> bool:
        row = self._session.one(
            "INSERT INTO recorded_replies (scope, key, digest, reply, recorded_at) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (scope, key) DO NOTHING RETURNING 1",
            (scope, key, digest, reply, now),
        )
        self._session.state_written = True
        return row is not None
