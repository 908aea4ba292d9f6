"""The access area: API tokens, recorded replies and worker sessions found again by name, what
a front end that serves others over a network (the service) keeps in the production.

``Production`` builds one :class:`AccessReads`, given its handle, and offers it as
``production.access``; ``Transaction`` builds one :class:`AccessOperations` per edit and
delegates ``create_api_token``, ``revoke_api_token`` and ``record_reply`` to it (their public
docstrings are on :class:`postproject.transaction.Transaction`). Everything here is stored
state, not revisions: a token's secret is shown once, at its creation, and only its SHA-256
is stored (:mod:`postproject.model.access`).
"""

from __future__ import annotations

import json
from datetime import datetime

from postproject.base.edit import EditState
from postproject.base.handle import ProductionHandle
from postproject.engine.service import ApiTokenRow
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model.access import (
    MAX_REPLY_BYTES,
    ApiRole,
    ApiToken,
    NewApiToken,
    RecordedReply,
    looks_like_secret,
    new_secret,
    reply_key,
    secret_hash,
    token_name,
)
from postproject.model.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    Reason,
)
from postproject.model.workers import MAX_NAME_BYTES, WorkerSession


def _token(row: ApiTokenRow) -> ApiToken:
    name, role, created, expires, revoked = row
    return ApiToken(
        name,
        ApiRole.from_code(role),
        clocks.from_micros(created),
        clocks.from_micros(expires) if expires is not None else None,
        clocks.from_micros(revoked) if revoked is not None else None,
    )


def _digest(value: object) -> bytes:
    if not isinstance(value, bytes) or len(value) != 32:
        raise InvalidArgumentError("a reply's digest must be 32 bytes (a SHA-256)")
    return value


class AccessReads:
    """``production.access``: tokens, recorded replies and worker sessions (committed state)."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def tokens(self) -> tuple[ApiToken, ...]:
        """Every API token, by name, revoked and expired ones included (never a secret)."""
        self._handle.check_open()
        return tuple(_token(row) for row in self._handle.reads.service.api_tokens())

    def token(self, secret: object) -> ApiToken | None:
        """The token whose secret this is, if it is active now: None for anything else (not a
        token's shape, unknown, revoked or expired), so a caller cannot tell which."""
        self._handle.check_open()
        if not looks_like_secret(secret):
            return None
        assert isinstance(secret, str)
        row = self._handle.reads.service.api_token(secret_hash(secret))
        if row is None:
            return None
        token = _token(row)
        return token if token.active(clocks.from_micros(self._handle.now_micros())) else None

    def reply(self, scope: str, key: str) -> RecordedReply | None:
        """The reply recorded under ``(scope, key)`` (``Transaction.record_reply``), or None."""
        self._handle.check_open()
        scope, key = reply_key(scope, key)
        row = self._handle.reads.service.reply(scope, key)
        if row is None:
            return None
        digest, reply, recorded = row
        return RecordedReply(scope, key, digest, reply, clocks.from_micros(recorded))

    def worker_session(self, name: str, session_id: bytes) -> WorkerSession:
        """The session ``session_id`` of the registered worker ``name``, as ``register_worker``
        returned it to the process that registered (for a front end that serves that process
        over a network and keeps nothing between requests).

        Raises:
            NotFoundError: (not_found) no worker of that name is registered.
            ConflictError: (conflict, ``worker_session_replaced``) the worker registered again:
                this session is fenced.
        """
        self._handle.check_open()
        names.bounded_text("worker name", name, MAX_NAME_BYTES)
        if not isinstance(session_id, bytes) or len(session_id) != 16:
            raise InvalidArgumentError("a worker session id is 16 bytes")
        found = self._handle.reads.service.worker_registration(name)
        if found is None:
            raise NotFoundError(f"worker {name!r} is not registered")
        worker_id, current, capacity, kinds = found
        if current != session_id:
            raise ConflictError(
                f"worker {name!r} registered again elsewhere; this session is fenced",
                reason=Reason.WORKER_SESSION_REPLACED,
            )
        listed = tuple(json.loads(kinds)) if kinds is not None else None
        return WorkerSession(self._handle.production_id, worker_id, name, session_id, capacity, listed)


class AccessOperations:
    """Creating and revoking API tokens, recording replies (stored state: no revision)."""

    def __init__(self, edit: EditState) -> None:
        self._edit = edit
        self._handle = edit.handle

    def create_api_token(
        self, name: str, role: ApiRole | str, *, expires_at: datetime | None = None
    ) -> NewApiToken:
        """Create an API token; its secret is in the result, and nowhere else ever after."""
        token_name(name)
        checked = ApiRole.parse(role)
        now = self._handle.now_micros()
        expires = None
        if expires_at is not None:
            if not isinstance(expires_at, datetime) or expires_at.tzinfo is None:
                raise InvalidArgumentError(f"token expires_at must be an aware datetime; got {expires_at!r}")
            expires = clocks.to_micros(expires_at)
            if expires <= now:
                raise InvalidArgumentError("token expires_at must be in the future")
        secret = new_secret()
        with self._edit.operation(savepoint=False) as s:
            if not s.service.insert_api_token(name, secret_hash(secret), checked.code, now, expires):
                raise AlreadyExistsError(
                    f"an API token named {name!r} already exists (revoked ones keep their name)"
                )
        token = ApiToken(
            name, checked, clocks.from_micros(now), clocks.from_micros(expires) if expires else None, None
        )
        return NewApiToken(token, secret)

    def revoke_api_token(self, name: str) -> ApiToken:
        """Revoke the token ``name`` (at once: the next request with it is refused)."""
        token_name(name)
        with self._edit.operation(savepoint=False) as s:
            row = s.service.revoke_api_token(name, self._handle.now_micros())
            if row is None:
                raise NotFoundError(f"no API token named {name!r}")
        return _token(row)

    def record_reply(self, scope: str, key: str, digest: bytes, reply: str) -> None:
        """Record ``reply`` (the answer to the request ``digest`` identifies) under ``(scope, key)``."""
        scope, key = reply_key(scope, key)
        _digest(digest)
        names.bounded_text("reply", reply, MAX_REPLY_BYTES)
        with self._edit.operation(savepoint=False) as s:
            if not s.service.insert_reply(scope, key, digest, reply, self._handle.now_micros()):
                raise AlreadyExistsError(f"a reply is already recorded under {scope!r} {key!r}")
