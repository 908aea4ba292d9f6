"""What the job table shows: state, kind, stuck claims, a text search, time ranges and a
sort (no Qt).

Everything but "stuck" goes to the store query: state, kind, the text search (the store's
indexes over every job: kinds, output asset names, agents and workers, diagnostics, id
tails, the string values of typed parameters), "requested/finished within" ranges and the sort column, read as keyset pages
over indexes. Nothing is filtered client-side from the pages, so a search never stops at a
window of jobs. Live changes are matched here (``matches``) against the same fields (a
changed row is read with its parameters' texts while a search is listed).

"Stuck claims" lists claimed jobs whose lease expired or is expiring (less than a third of
that lease's duration left), soonest first, from the store's expiry index
(``claims_expiring``, which also filters by kind) read up to the longest lead a lease can
have (:data:`~postproject_gui.look.states.LONGEST_LEAD`), keeping the rows that qualify.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from postproject import JobState
from postproject_gui.look.states import LONGEST_LEAD, STATE_LOOKS, ClaimHealth
from postproject_gui.services.types import JobRow, StoreQuery


@dataclass(frozen=True, slots=True)
class JobFilter:
    """The table's filter; immutable, so "changed?" is a plain comparison."""

    state: JobState | None = None
    kind: str | None = None
    text: str = ""
    stuck: bool = False
    newest_first: bool = True  # descending (for "requested": newest first)
    sort: str = "requested"  # one of SORTS (the store's sorts)
    requested_within: str = ""  # "", or a key of WITHIN: requested in the last ...
    finished_within: str = ""  # "", or a key of WITHIN: finished in the last ...

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
        """Whether rows of a page may be dropped after the store returned them: only for
        stuck claims (read up to the longest lead, kept when they qualify, and searched as
        read); every other filter and search runs in the store."""
        return self.stuck

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.needle.split()))

    def store_query(self, now: datetime) -> StoreQuery:
        if self.stuck:
            return StoreQuery(kind=self.kind, claims_before=now + LONGEST_LEAD)
        return StoreQuery(
            self.state,
            self.kind,
            self.newest_first,
            search=self.text.strip(),
            sort=self.sort,
            requested_after=now - WITHIN[self.requested_within] if self.requested_within in WITHIN else None,
            finished_after=now - WITHIN[self.finished_within] if self.finished_within in WITHIN else None,
        )

    def matches(self, row: JobRow, now: datetime, *, text: bool = True) -> bool:
        """Whether a (changed) job belongs in the table under this filter at ``now``
        (``text=False``: a row the store's search already matched)."""
        job = row.job
        if self.kind is not None and job.kind != self.kind:
            return False
        if self.requested_within in WITHIN and job.requested_at < now - WITHIN[self.requested_within]:
            return False
        if self.finished_within in WITHIN and (
            job.finished_at is None or job.finished_at < now - WITHIN[self.finished_within]
        ):
            return False
        if self.stuck:
            if row.health(now) not in (ClaimHealth.STUCK, ClaimHealth.EXPIRING):
                return False
        elif self.state is not None and job.state is not self.state:
            return False
        return not text or self.matches_text(row)

    def matches_text(self, row: JobRow) -> bool:
        terms = self.terms
        if not terms:
            return True
        text = haystack(row)
        return all(term in text for term in terms)

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
        if self.requested_within in WITHIN:
            parts.append(f"requested in the last {self.requested_within}")
        if self.finished_within in WITHIN:
            parts.append(f"finished in the last {self.finished_within}")
        return " · ".join(parts) or "all jobs"

    def to_json(self) -> dict[str, object]:
        """The filter as saved (QSettings "saved filters")."""
        return {
            "state": self.state.value if self.state else None,
            "kind": self.kind,
            "text": self.text,
            "stuck": self.stuck,
            "newest_first": self.newest_first,
            "sort": self.sort,
            "requested_within": self.requested_within,
            "finished_within": self.finished_within,
        }

    @classmethod
    def from_json(cls, data: object) -> JobFilter | None:
        """A saved filter, or None when it is not one (a damaged setting is skipped)."""
        if not isinstance(data, dict):
            return None
        try:
            state = data.get("state")
            flt = cls(
                state=JobState(state) if state else None,
                kind=str(data["kind"]) if data.get("kind") else None,
                text=str(data.get("text", "")),
                stuck=bool(data.get("stuck", False)),
                newest_first=bool(data.get("newest_first", True)),
                sort=str(data.get("sort", "requested")),
                requested_within=str(data.get("requested_within", "")),
                finished_within=str(data.get("finished_within", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None
        if flt.sort not in SORTS or not {flt.requested_within, flt.finished_within} <= {"", *WITHIN}:
            return None
        return flt


SORTS = ("requested", "kind", "state", "priority", "finished", "worker")
WITHIN: dict[str, timedelta] = {
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}


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
    for attempt in job.attempts:
        parts += [attempt.agent.name if attempt.agent else "", attempt.worker or "", attempt.diagnostic or ""]
    if job.failure is not None:
        parts.append(job.failure.diagnostic)
    if job.target_root:
        parts.append(job.target_root)
    text = "\n".join(parts).lower()
    return text if row.parameters is None else f"{text}\n{row.parameters}"
