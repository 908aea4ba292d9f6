"""Why a job is still requested: typed reasons in plain words, with the ids they name."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from postproject.model.ids import JobId
from postproject.model.lifecycle import JobState

MAX_AHEAD = 10_000  # jobs ahead counted at most


@dataclass(frozen=True, slots=True)
class WaitingOnJob:
    """A job it depends on has not finished yet."""

    job_id: JobId
    state: JobState
    code: ClassVar[str] = "waiting_on"

    @property
    def message(self) -> str:
        return f"waiting on job {self.job_id} ({self.state.value})"


@dataclass(frozen=True, slots=True)
class BlockedByJob:
    """A job it depends on failed or was cancelled: it cannot run until that job is requested
    again (which moves this dependency onto the new job) or it is cancelled."""

    job_id: JobId
    state: JobState
    code: ClassVar[str] = "blocked_by"

    @property
    def message(self) -> str:
        return f"blocked by {self.state.value} job {self.job_id} (request it again, or cancel this job)"


@dataclass(frozen=True, slots=True)
class NotBefore:
    """It is held back until ``at`` (its ``not_before``)."""

    at: datetime
    code: ClassVar[str] = "not_before"

    @property
    def message(self) -> str:
        return f"not before {self.at.isoformat()}"


@dataclass(frozen=True, slots=True)
class NoOnlineWorker:
    """No registered worker that takes its kind is online (unregistered claimers may still take it)."""

    kind: str
    code: ClassVar[str] = "no_online_worker"

    @property
    def message(self) -> str:
        return f"no online worker registered for its kind {self.kind}"


@dataclass(frozen=True, slots=True)
class JobsAhead:
    """How many claimable jobs of its kind a claim takes first (``capped``: at least that many)."""

    count: int
    capped: bool = False
    code: ClassVar[str] = "jobs_ahead"

    @property
    def message(self) -> str:
        if self.count == 0:
            return "no job ahead of it: the next claim of its kind takes it"
        more = "+" if self.capped else ""
        return f"{self.count}{more} job{'s' if self.count != 1 or self.capped else ''} ahead of it"


@dataclass(frozen=True, slots=True)
class NotPending:
    """The job is not requested (so nothing holds it back)."""

    state: JobState
    code: ClassVar[str] = "not_pending"

    @property
    def message(self) -> str:
        return f"it is {self.state.value}, not requested"


PendingReason = WaitingOnJob | BlockedByJob | NotBefore | NoOnlineWorker | JobsAhead | NotPending


@dataclass(frozen=True, slots=True)
class PendingExplanation:
    """Why ``job_id`` is (still) requested; ``claimable`` when a claim of its kind could take it now."""

    job_id: JobId
    state: JobState
    claimable: bool
    reasons: tuple[PendingReason, ...]

    @property
    def messages(self) -> tuple[str, ...]:
        return tuple(r.message for r in self.reasons)
