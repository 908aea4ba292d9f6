"""What the job table shows: state, kind, stuck claims and a text search (no Qt).

State and kind go to the store query (keyset pages over its indexes). The text search
(over ids, kinds, names of the output and first input, tool, agent and worker names, diagnostics)
is applied by the table model to the rows of each page as it arrives, because the store
has no text index; the model keeps reading pages while few rows match and says how many
jobs it has searched (see ``JobTableModel``). A QSortFilterProxyModel was rejected: when a
whole page is filtered out, the view never asks for the next one and the list stalls.

"Stuck claims" lists claimed jobs whose lease expired or is expiring (less than a third of
that lease's duration left), soonest first, from the store's expiry index
(``claims_expiring``, which also filters by kind) read up to the longest lead a lease can
have (:data:`~postproject_gui.states.LONGEST_LEAD`), keeping the rows that qualify.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from postproject import JobState
from postproject_gui.services.types import JobRow, StoreQuery
from postproject_gui.states import LONGEST_LEAD, STATE_LOOKS, ClaimHealth


@dataclass(frozen=True, slots=True)
class JobFilter:
    """The table's filter; immutable, so "changed?" is a plain comparison."""

    state: JobState | None = None
    kind: str | None = None
    text: str = ""
    stuck: bool = False
    newest_first: bool = True

    def with_(self, **changes: object) -> JobFilter:
        """A copy with some fields changed (``stuck`` and ``state`` exclude each other)."""
        updated = replace(self, **changes)  # type: ignore[arg-type]
        if changes.get("stuck"):
            updated = replace(updated, state=None)
        elif changes.get("state") is not None:
            updated = replace(updated, stuck=False)
        return updated

    @property
    def needle(self) -> str:
        return self.text.strip().lower()

    @property
    def client_side(self) -> bool:
        """Whether rows of a page may be dropped after the store returned them."""
        return bool(self.needle) or self.stuck

    def store_query(self, now: datetime) -> StoreQuery:
        if self.stuck:
            return StoreQuery(kind=self.kind, claims_before=now + LONGEST_LEAD)
        return StoreQuery(self.state, self.kind, self.newest_first)

    def matches(self, row: JobRow, now: datetime) -> bool:
        """Whether a (changed) job belongs in the table under this filter at ``now``."""
        job = row.job
        if self.kind is not None and job.kind != self.kind:
            return False
        if self.stuck:
            if row.health(now) not in (ClaimHealth.STUCK, ClaimHealth.EXPIRING):
                return False
        elif self.state is not None and job.state is not self.state:
            return False
        return self.matches_text(row)

    def matches_text(self, row: JobRow) -> bool:
        needle = self.needle
        if not needle:
            return True
        return needle in haystack(row)

    def describe(self) -> str:
        """A short human description: ``failed · org.x:y · "abc"``."""
        parts = []
        if self.stuck:
            parts.append("stuck claims")
        elif self.state is not None:
            parts.append(STATE_LOOKS[self.state].label.lower())
        if self.kind:
            parts.append(self.kind)
        if self.needle:
            parts.append(f'"{self.text.strip()}"')
        return " · ".join(parts) or "all jobs"


def haystack(row: JobRow) -> str:
    """The lower-cased text a search looks in."""
    job = row.job
    parts = [str(job.id), job.kind, str(job.output_asset_id), row.output_name or "", row.first_input or ""]
    if job.claim is not None:
        parts += [
            job.claim.tool.name,
            job.claim.agent.name if job.claim.agent else "",
            job.claim.worker or "",
        ]
    if job.failure is not None:
        parts.append(job.failure.diagnostic)
    if job.target_root:
        parts.append(job.target_root)
    return "\n".join(parts).lower()
