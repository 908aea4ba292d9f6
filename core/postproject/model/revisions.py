"""The revision feed: numbered, gap-free commits and their semantic events."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, overload

from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import ProductionId, RevisionId
from postproject.model.lifecycle import HISTORY_EVENT_KINDS

EVENT_KINDS: frozenset[str] = frozenset(
    {
        "asset_imported",
        "representation_added",
        "representation_fingerprint_observed",
        "media_root_added",
        "metadata_added_or_replaced",
        "activity_created",
        "activity_input_added",
        "activity_output_added",
    }
    | HISTORY_EVENT_KINDS
)


def event_kind(value: object) -> str:
    """Validate an event kind name (``row_updated`` and friends are invalid_argument)."""
    if not isinstance(value, str) or value not in EVENT_KINDS:
        raise InvalidArgumentError(
            f"event kind must be one of {', '.join(sorted(EVENT_KINDS))}; got {str(value)[:60]!r}"
        )
    return value


@dataclass(frozen=True, slots=True)
class RevisionEvent:
    """One semantic change; the payload carries ids (as text) only."""

    position: int
    kind: str
    payload: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.payload[key]

    @property
    def subject(self) -> str | None:
        """The id of the main object the event is about."""
        for key in (
            "job_id",
            "representation_id",
            "activity_id",
            "asset_id",
            "media_root_id",
        ):
            if key in self.payload:
                return str(self.payload[key])
        target = self.payload.get("target")
        return str(target["id"]) if isinstance(target, Mapping) else None


@dataclass(frozen=True, slots=True)
class Revision:
    """A committed transaction. ``origin`` is the application that made it; ``principal``, when
    set, who it acted for (an API token's name, for a revision written through the service)."""

    id: RevisionId
    sequence: int
    committed_at: datetime
    origin: str | None
    message: str | None
    events: tuple[RevisionEvent, ...] = ()
    principal: str | None = (
        None  # who acted through a front end that authenticates (the service's token name)
    )


@dataclass(frozen=True, slots=True)
class RevisionSummary:
    """A revision's header with how many events of each kind it holds."""

    id: RevisionId
    sequence: int
    committed_at: datetime
    origin: str | None
    message: str | None
    event_counts: Mapping[str, int]
    subject: str | None = None  # the id every event is about, when there is exactly one
    principal: str | None = None


class JobHistoryEntry(NamedTuple):
    """One lifecycle event of a job and the revision that made it."""

    sequence: int
    committed_at: datetime
    kind: str
    origin: str | None
    message: str | None
    principal: str | None = None


@dataclass(frozen=True, slots=True)
class CommitReceipt:
    """What a commit produced; ``revision`` is None when nothing changed."""

    production_id: ProductionId
    revision: Revision | None


@dataclass(frozen=True, slots=True)
class Changes:
    """Revisions after a sequence, oldest first; iterate it like a list.

    ``through_sequence`` is where a consumer's cursor may advance to: with a kind filter,
    revisions without matching events are skipped but still covered.
    """

    revisions: tuple[Revision, ...]
    through_sequence: int

    def __iter__(self) -> Iterator[Revision]:
        return iter(self.revisions)

    def __len__(self) -> int:
        return len(self.revisions)

    def __bool__(self) -> bool:
        return bool(self.revisions)

    @overload
    def __getitem__(self, index: int) -> Revision: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Revision, ...]: ...
    def __getitem__(self, index: int | slice) -> Revision | tuple[Revision, ...]:
        return self.revisions[index]
