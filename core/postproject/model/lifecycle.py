"""The job lifecycle: states, actions and the transition table.

The table is the single source of truth: storage derives each guarded statement's allowed
source states from it, and the monitor draws its state diagram from it.

::

    [*] --request--> requested --claim--> claimed --complete--> succeeded
                     requested <--release-- claimed --fail--> failed
    requested|claimed --cancel--> cancelled;  claimed --renew / reclaim--> claimed

The farm layer adds moves that never contradict these: a supervisor may requeue a claim, a
worker may fail retryably while attempts remain, the loss sweep finalises expired claims
(back to requested, or failed when out of attempts), and a requested job's priority may
change.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class JobState(enum.Enum):
    """The stored state of a job; compare members with ``is``."""

    REQUESTED = "requested"
    CLAIMED = "claimed"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def code(self) -> int:
        """The stored code (1-5), also used inside cursors."""
        return _CODES[self]

    @classmethod
    def from_code(cls, code: int) -> JobState:
        return _STATES_BY_CODE[code]

    @property
    def terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


_CODES = {
    JobState.REQUESTED: 1,
    JobState.CLAIMED: 2,
    JobState.SUCCEEDED: 3,
    JobState.FAILED: 4,
    JobState.CANCELLED: 5,
}
_STATES_BY_CODE = {code: state for state, code in _CODES.items()}


class Action(enum.Enum):
    """What a caller can do to a job."""

    REQUEST = "request"
    CLAIM = "claim"
    RENEW = "renew"
    RELEASE = "release"
    COMPLETE = "complete"
    FAIL = "fail"
    CANCEL = "cancel"
    REQUEUE = "requeue"
    RETRY = "retry"  # a retryable failure while attempts remain
    FINALIZE_LOST = "finalize_lost"
    PRIORITIZE = "prioritize"


class Holder(enum.Enum):
    """Who may perform a transition."""

    ANYONE = "anyone"
    LEASE = "lease"  # needs the current, unexpired lease


@dataclass(frozen=True, slots=True)
class Transition:
    """One legal move of the lifecycle."""

    source: JobState | None  # None: the job does not exist yet
    action: Action
    target: JobState
    holder: Holder
    event: str  # the revision event it emits
    note: str = ""


TRANSITIONS: tuple[Transition, ...] = (
    Transition(None, Action.REQUEST, JobState.REQUESTED, Holder.ANYONE, "job_requested"),
    Transition(JobState.REQUESTED, Action.CLAIM, JobState.CLAIMED, Holder.ANYONE, "job_claimed"),
    Transition(
        JobState.CLAIMED,
        Action.CLAIM,
        JobState.CLAIMED,
        Holder.ANYONE,
        "job_claimed",
        "only after the lease expired; fences the earlier lease",
    ),
    Transition(
        JobState.CLAIMED,
        Action.RENEW,
        JobState.CLAIMED,
        Holder.LEASE,
        "job_claim_renewed",
        "must strictly extend the expiry and commit before the old expiry",
    ),
    Transition(
        JobState.CLAIMED,
        Action.RELEASE,
        JobState.REQUESTED,
        Holder.LEASE,
        "job_claim_released",
    ),
    Transition(
        JobState.CLAIMED,
        Action.COMPLETE,
        JobState.SUCCEEDED,
        Holder.LEASE,
        "job_succeeded",
    ),
    Transition(JobState.CLAIMED, Action.FAIL, JobState.FAILED, Holder.LEASE, "job_failed"),
    Transition(
        JobState.CLAIMED,
        Action.CANCEL,
        JobState.CANCELLED,
        Holder.ANYONE,
        "job_cancelled",
    ),
    Transition(
        JobState.REQUESTED,
        Action.CANCEL,
        JobState.CANCELLED,
        Holder.ANYONE,
        "job_cancelled",
    ),
    Transition(
        JobState.CLAIMED,
        Action.REQUEUE,
        JobState.REQUESTED,
        Holder.ANYONE,
        "job_requeued",
        "a supervisor returns a claim (expired or not); fences its lease",
    ),
    Transition(
        JobState.CLAIMED,
        Action.RETRY,
        JobState.REQUESTED,
        Holder.LEASE,
        "job_retry_scheduled",
        "a retryable failure while attempts remain",
    ),
    Transition(
        JobState.CLAIMED,
        Action.FINALIZE_LOST,
        JobState.REQUESTED,
        Holder.ANYONE,
        "job_lost",
        "the loss sweep: an expired, unrenewed claim with attempts left",
    ),
    Transition(
        JobState.CLAIMED,
        Action.FINALIZE_LOST,
        JobState.FAILED,
        Holder.ANYONE,
        "job_failed",
        "the loss sweep: an expired claim out of attempts",
    ),
    Transition(
        JobState.REQUESTED,
        Action.PRIORITIZE,
        JobState.REQUESTED,
        Holder.ANYONE,
        "job_priority_changed",
    ),
)


def sources(action: Action) -> frozenset[JobState]:
    """The states from which ``action`` is legal."""
    return frozenset(t.source for t in TRANSITIONS if t.action is action and t.source is not None)


def transitions_from(state: JobState) -> tuple[Transition, ...]:
    """The legal moves out of ``state``, in table order."""
    return tuple(t for t in TRANSITIONS if t.source is state)


def event_for(action: Action) -> str:
    """The revision event kind an action emits."""
    return next(t.event for t in TRANSITIONS if t.action is action)


JOB_EVENT_KINDS: frozenset[str] = frozenset(t.event for t in TRANSITIONS)
# Events about a job's attempt that change no state: its holder confirmed the stop a cancel
# or requeue asked for, or the stop deadline (the lease's expiry) passed without it.
STOP_EVENT_KINDS: frozenset[str] = frozenset({"job_stop_confirmed", "job_stop_missed"})
HISTORY_EVENT_KINDS: frozenset[str] = JOB_EVENT_KINDS | STOP_EVENT_KINDS  # a job's history
