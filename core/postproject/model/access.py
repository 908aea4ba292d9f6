"""API tokens and recorded replies: what a front end that serves others over a network keeps
in the production (the service, :mod:`postproject.service`).

An API token is a bearer secret ``ppa1_`` + 43 base64url characters (32 random bytes); the
production stores only its SHA-256 hash, with a unique name, a :class:`ApiRole`, and its
creation, expiry and revocation times. The prefix is never the lease tokens' ``ppl1``, so
a scanner (or a person) tells them apart.

A recorded reply is a front end's answer to a request it must be able to repeat exactly
(an ``Idempotency-Key`` replay, a completion report sent again after its answer was lost),
kept under a ``(scope, key)`` with a digest of the request it answered. It is recorded in
the same transaction as the change it answers, so it exists exactly when that change does.
"""

from __future__ import annotations

import enum
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime

from postproject.model import names
from postproject.model.errors import InvalidArgumentError

TOKEN_PREFIX = "ppa1_"
_SECRET = re.compile(r"ppa1_[A-Za-z0-9_-]{43}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}")
MAX_SCOPE_BYTES = 512
MAX_KEY_BYTES = 512
MAX_REPLY_BYTES = 1024 * 1024


class ApiRole(enum.Enum):
    """What a token may do through the service (each role but ``worker`` includes the one before it).

    ``reader``: every read. ``submitter``: a reader that also requests jobs and cancels or
    retries the jobs its own token requested. ``supervisor``: every client action on any job
    (cancel, retry, requeue, priority, the loss sweep, regeneration). ``worker``: the Worker
    API only (register, heartbeat, claim, renew, report).
    """

    READER = "reader"
    SUBMITTER = "submitter"
    SUPERVISOR = "supervisor"
    WORKER = "worker"

    @property
    def code(self) -> int:
        return _ROLE_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> ApiRole:
        return _ROLES_BY_CODE[code]

    @classmethod
    def parse(cls, value: object) -> ApiRole:
        """A role from its name (invalid_argument naming the roles otherwise)."""
        for role in cls:
            if value == role.value or value is role:
                return role
        raise InvalidArgumentError(
            f"token role must be one of {', '.join(r.value for r in cls)}; got {str(value)[:40]!r}"
        )


_ROLE_CODES = {role: number for number, role in enumerate(ApiRole, start=1)}
_ROLES_BY_CODE = {number: role for role, number in _ROLE_CODES.items()}


@dataclass(frozen=True, slots=True)
class ApiToken:
    """An API token as the production keeps it (never its secret)."""

    name: str
    role: ApiRole
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    def active(self, now: datetime) -> bool:
        """Neither revoked nor expired at ``now`` (a token is expired from ``expires_at`` on)."""
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


@dataclass(frozen=True, slots=True)
class NewApiToken:
    """A token just created: its record and its secret, shown this once and never stored."""

    token: ApiToken
    secret: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class RecordedReply:
    """A reply recorded for replay: the digest of the request it answered, and the reply."""

    scope: str
    key: str
    digest: bytes
    reply: str
    recorded_at: datetime


def token_name(value: object) -> str:
    """Validate a token name: 1-128 ASCII letters, digits and ``. _ @ : + -``, starting with a
    letter or digit (it names the principal of every revision the token writes)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise InvalidArgumentError(
            "token name must be 1-128 ASCII letters, digits, '.', '_', '@', ':', '+' or '-', starting "
            f"with a letter or digit; got {str(value)[:60]!r}"
        )
    return value


def new_secret() -> str:
    """A fresh token secret (``ppa1_`` and 256 random bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def looks_like_secret(value: object) -> bool:
    """Whether ``value`` has the shape of a token secret (a cheap check before any lookup)."""
    return isinstance(value, str) and _SECRET.fullmatch(value) is not None


def secret_hash(secret: str) -> bytes:
    """What the production stores of a token: the SHA-256 of its text."""
    return hashlib.sha256(secret.encode("ascii")).digest()


def reply_key(scope: object, key: object) -> tuple[str, str]:
    """Validate a recorded reply's scope and key (1-512 UTF-8 bytes each, no control characters)."""
    checked = (
        names.bounded_text("reply scope", scope, MAX_SCOPE_BYTES),
        names.bounded_text("reply key", key, MAX_KEY_BYTES),
    )
    if any(names.has_control(text) for text in checked):
        raise InvalidArgumentError("a reply's scope and key must not contain control characters")
    return checked
