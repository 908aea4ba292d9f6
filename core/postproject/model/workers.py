"""Registered workers: stable identities by name, one live session each, liveness from heartbeats."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from postproject.model import names
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import JobId, ProductionId
from postproject.model.jobs import AttemptOutcome

HEARTBEAT_INTERVAL = timedelta(seconds=10)
OFFLINE_AFTER = timedelta(seconds=30)  # a worker is offline once its last heartbeat is this old
MAX_CAPACITY = 1024
MAX_NAME_BYTES = 256


class WorkerState(enum.Enum):
    """Liveness, derived from the last heartbeat (never stored)."""

    ONLINE = "online"
    OFFLINE = "offline"


@dataclass(frozen=True, slots=True)
class WorkerSession:
    """This process's registration of a worker; fenced when the name registers again."""

    production_id: ProductionId
    worker_id: bytes
    name: str
    session_id: bytes
    capacity: int
    kinds: tuple[str, ...] | None

    def __repr__(self) -> str:
        return f"WorkerSession(name={self.name!r}, capacity={self.capacity})"


@dataclass(frozen=True, slots=True)
class Worker:
    """A registered worker as the production sees it now."""

    name: str
    host: str | None
    state: WorkerState
    last_seen: datetime
    capacity: int
    kinds: tuple[str, ...] | None  # None: any kind
    running: tuple[JobId, ...]  # jobs it holds an unexpired claim on
    outcomes: Mapping[AttemptOutcome, int] = field(default_factory=dict)  # attempts by outcome
    registered_at: datetime | None = None

    @property
    def succeeded(self) -> int:
        return self.outcomes.get(AttemptOutcome.SUCCEEDED, 0)

    @property
    def failed(self) -> int:
        return self.outcomes.get(AttemptOutcome.FAILED, 0)


def check_registration(
    name: object, capacity: object, kinds: object, host: object
) -> tuple[str, int, tuple[str, ...] | None, str | None]:
    """Validate ``register_worker``'s arguments (invalid_argument names the field)."""
    text = names.bounded_text("worker name", name, MAX_NAME_BYTES)
    if text != text.strip() or names.has_control(text):
        raise InvalidArgumentError(
            f"worker name must not have surrounding spaces or control characters; got {text!r}"
        )
    if isinstance(capacity, bool) or not isinstance(capacity, int) or not 1 <= capacity <= MAX_CAPACITY:
        raise InvalidArgumentError(
            f"worker capacity must be an int from 1 to {MAX_CAPACITY}; got {capacity!r}"
        )
    checked: tuple[str, ...] | None = None
    if kinds is not None:
        if isinstance(kinds, str) or not isinstance(kinds, (list, tuple, set, frozenset)) or not kinds:
            raise InvalidArgumentError("worker kinds must be a non-empty list of job kinds (or None for any)")
        checked = tuple(sorted({names.namespaced("job kind", k) for k in kinds}))
    host_text = None
    if host is not None:
        host_text = names.bounded_text("worker host", host, MAX_NAME_BYTES)
    return text, capacity, checked, host_text
