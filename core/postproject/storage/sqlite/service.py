"""The service's statements on SQLite: API tokens, recorded replies, registrations by name
(:mod:`postproject.engine.service`; schema: ``migrations/0008_service.sql``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Protocol

from postproject.engine.service import ApiTokenRow, ReplyRow, WorkerRegistration
from postproject.storage.sqlite.errors import translated

_TOKEN = "SELECT name, role, created_at, expires_at, revoked_at FROM api_tokens"
_REPLY = "SELECT digest, reply, recorded_at FROM recorded_replies WHERE scope = ? AND key = ?"


class _Reader(Protocol):
    def snapshot(self) -> Any: ...


class _Session(Protocol):
    conn: sqlite3.Connection
    path: Path
    state_written: bool


class ServiceReader:
    """Committed tokens, replies and registrations through the production's reader."""

    def __init__(self, reader: _Reader) -> None:
        self._reader = reader

    def _one(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._reader.snapshot() as conn:
            return conn.execute(sql, params).fetchone()

    def api_token(self, secret_hash: bytes) -> ApiTokenRow | None:
        row = self._one(f"{_TOKEN} WHERE secret_hash = ?", (secret_hash,))
        return tuple(row) if row is not None else None

    def api_tokens(self) -> list[ApiTokenRow]:
        with self._reader.snapshot() as conn:
            return [tuple(row) for row in conn.execute(f"{_TOKEN} ORDER BY name")]

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        row = self._one(_REPLY, (scope, key))
        return (bytes(row[0]), row[1], row[2]) if row is not None else None

    def worker_registration(self, name: str) -> WorkerRegistration | None:
        row = self._one("SELECT id, session, capacity, kinds FROM workers WHERE name = ?", (name,))
        return (bytes(row[0]), bytes(row[1]), row[2], row[3]) if row is not None else None


class ServiceWriter:
    """Token and reply writes inside one edit (its ``BEGIN IMMEDIATE`` transaction)."""

    def __init__(self, session: _Session) -> None:
        self._session = session

    def _execute(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        session = self._session
        with translated(session.path):
            return session.conn.execute(sql, params)

    def insert_api_token(
        self, name: str, secret_hash: bytes, role: int, created_at: int, expires_at: int | None
    ) -> bool:
        cursor = self._execute(
            "INSERT INTO api_tokens (name, secret_hash, role, created_at, expires_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO NOTHING",
            (name, secret_hash, role, created_at, expires_at),
        )
        self._session.state_written = True
        return cursor.rowcount == 1

    def revoke_api_token(self, name: str, now: int) -> ApiTokenRow | None:
        row = self._execute(
            "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE name = ? "
            "RETURNING name, role, created_at, expires_at, revoked_at",
            (now, name),
        ).fetchone()
        self._session.state_written = True
        return tuple(row) if row is not None else None

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        row = self._execute(_REPLY, (scope, key)).fetchone()
        return (bytes(row[0]), row[1], row[2]) if row is not None else None

    def insert_reply(self, scope: str, key: str, digest: bytes, reply: str, now: int) -> bool:
        cursor = self._execute(
            "INSERT INTO recorded_replies (scope, key, digest, reply, recorded_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (scope, key) DO NOTHING",
            (scope, key, digest, reply, now),
        )
        self._session.state_written = True
        return cursor.rowcount == 1
