"""The engine interface's part for a front end that serves others: API tokens, recorded
replies and worker registrations looked up by name.

:class:`postproject.engine.Reads` offers these reads as its ``service`` attribute, and
:class:`postproject.engine.WriteSession` these writes as its ``service``
(:class:`OffersServiceReads`, :class:`OffersServiceSession`): the statements, the same on
both engines, live in one module (``storage/sql/service.py``). Everything here is stored state, never a revision or an event: a token's
secret is never stored (only its SHA-256), and a reply carries no lease token.

Schema (migration ``0008_service``): ``api_tokens (name, secret_hash, role, created_at,
expires_at, revoked_at)``, ``recorded_replies (scope, key, digest, reply, recorded_at)`` and
``revisions.principal``. Roles are :class:`postproject.model.access.ApiRole` codes.
"""

from __future__ import annotations

from typing import Protocol

ApiTokenRow = tuple[str, int, int, int | None, int | None]  # name, role, created, expires, revoked
ReplyRow = tuple[bytes, str, int]  # digest, reply, recorded at
WorkerRegistration = tuple[bytes, bytes, int, str | None]  # worker id, session, capacity, kinds (JSON)


class ServiceReads(Protocol):
    """Committed API tokens, replies and registrations (``Reads.service``)."""

    def api_token(self, secret_hash: bytes) -> ApiTokenRow | None:
        """The token whose secret hashes to ``secret_hash`` (revoked and expired ones too)."""
        ...

    def api_tokens(self) -> list[ApiTokenRow]:
        """Every token, by name."""
        ...

    def reply(self, scope: str, key: str) -> ReplyRow | None: ...

    def worker_registration(self, name: str) -> WorkerRegistration | None:
        """The registered worker ``name``'s id, current session, capacity and kinds."""
        ...


class ServiceSession(Protocol):
    """Writes of tokens and replies inside one edit (``WriteSession.service``). Each is atomic
    and marks the edit as stored state (no revision unless something else is staged)."""

    def insert_api_token(
        self, name: str, secret_hash: bytes, role: int, created_at: int, expires_at: int | None
    ) -> bool:
        """Add a token; False (nothing written) when the name is taken."""
        ...

    def revoke_api_token(self, name: str, now: int) -> ApiTokenRow | None:
        """Revoke the token ``name`` at ``now`` (an already revoked one keeps its first time);
        the token as it is now, or None when there is no such token."""
        ...

    def reply(self, scope: str, key: str) -> ReplyRow | None:
        """The reply recorded under ``(scope, key)``, as this edit sees it."""
        ...

    def insert_reply(self, scope: str, key: str, digest: bytes, reply: str, now: int) -> bool:
        """Record a reply; False (nothing written) when ``(scope, key)`` already has one
        (committed, or committed meanwhile by a concurrent edit once it ends)."""
        ...


class OffersServiceReads(Protocol):
    """Part of :class:`postproject.engine.Reads`."""

    @property
    def service(self) -> ServiceReads: ...


class OffersServiceSession(Protocol):
    """Part of :class:`postproject.engine.WriteSession`."""

    @property
    def service(self) -> ServiceSession: ...
