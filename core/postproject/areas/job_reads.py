"""The jobs area of a production: one job, keyset pages of jobs, failure groups, expiring
claims, counts, kinds and a job's history.

``Production`` builds one :class:`JobReads`, given its handle, and delegates its job reads to
it (their public docstrings are on :class:`postproject.production.Production`). Searches,
time ranges and sorts page through :mod:`postproject.areas.search`; the jobs area of a
transaction (what changes jobs) is :mod:`postproject.areas.jobs`.
"""

from __future__ import annotations

from datetime import datetime

from postproject.areas import search as job_search
from postproject.areas.search import FailureGroup
from postproject.base.handle import ProductionHandle
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import JobId, check_id
from postproject.model.jobs import Job
from postproject.model.lifecycle import JobState
from postproject.model.pages import Page, check_limit
from postproject.model.revisions import JobHistoryEntry


class JobReads:
    """Reads of jobs: by id, by page (plain or searched), grouped, expiring and counted."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def job(self, job_id: JobId) -> Job:
        """One job (not_found when absent)."""
        self._handle.check_open()
        check_id("job_id", job_id, JobId)
        return self._handle.reads.job(job_id)

    def jobs(
        self,
        limit: int,
        cursor: str | None,
        state: JobState | None,
        kind: str | None,
        *,
        search: str | None,
        requested_after: datetime | None,
        requested_before: datetime | None,
        finished_after: datetime | None,
        finished_before: datetime | None,
        sort: str,
        descending: bool,
    ) -> Page[Job]:
        """A keyset page of jobs: a plain page in id order when nothing but state and kind
        filters it, else a store-side search (:mod:`postproject.areas.search`)."""
        self._handle.check_open()
        check_limit(limit)
        if state is not None and not isinstance(state, JobState):
            raise InvalidArgumentError(f"state must be a JobState; got {state!r}")
        if kind is not None:
            names.namespaced("job kind", kind)
        plain = (
            sort == "requested"
            and not (search and search.strip())
            and not any(
                bound is not None
                for bound in (requested_after, requested_before, finished_after, finished_before)
            )
        )
        if not plain:
            q = job_search.query(
                state,
                kind,
                search=search,
                requested_after=requested_after,
                requested_before=requested_before,
                finished_after=finished_after,
                finished_before=finished_before,
                sort=sort,
                descending=descending,
            )
            return job_search.page(self._handle, q, limit, cursor)
        if search is not None:
            job_search.terms(search)  # validated even when blank
        params = (
            str(state.code) if state else "0",
            kind or "*",
            "desc" if descending else "asc",
        )
        after = self._handle.after("jobs", params, cursor)
        items = self._handle.reads.jobs(state, kind, after, limit + 1, descending=descending)
        return self._handle.page("jobs", params, items, limit, lambda j: j.id.bytes)

    def failure_groups(self, kind: str | None, limit: int) -> tuple[FailureGroup, ...]:
        """Failed jobs grouped by reason, largest first."""
        self._handle.check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("job kind", kind)
        return job_search.failure_groups(self._handle, kind, limit)

    def claims_expiring(
        self, before: datetime | None, limit: int, cursor: str | None, kind: str | None
    ) -> Page[Job]:
        """Claimed jobs whose lease expires at or before ``before`` (default now), soonest first."""
        self._handle.check_open()
        check_limit(limit)
        if kind is not None:
            names.namespaced("job kind", kind)
        params = (kind or "*",)
        position = None
        if cursor is not None:
            bound_text, expiry, last = self._handle.cursors.decode(cursor, "claims", params, 3)
            bound = int(bound_text)
            if before is not None and clocks.to_micros(before) != bound:
                raise InvalidArgumentError("query cursor does not match this query and its parameters")
            position = (int(expiry), JobId.parse(last).bytes)
        else:
            bound = clocks.to_micros(before) if before is not None else self._handle.now_micros()
        items = self._handle.reads.claims_expiring(bound, kind, position, limit + 1)
        more = len(items) > limit
        items = items[:limit]
        next_cursor = None
        if more:
            last_job = items[-1]
            assert last_job.claim is not None
            expires = clocks.to_micros(last_job.claim.expires_at)
            next_cursor = self._handle.cursors.encode(
                "claims", params, (str(bound), str(expires), str(last_job.id))
            )
        return Page(tuple(items), next_cursor)

    def job_counts(self, kind: str | None) -> dict[JobState, int]:
        """How many jobs are in each state (maintained counts: constant time)."""
        self._handle.check_open()
        if kind is not None:
            names.namespaced("job kind", kind)
        counts = self._handle.reads.job_counts(kind)
        return {state: counts.get(state.code, 0) for state in JobState}

    def job_kinds(self) -> tuple[str, ...]:
        """The kinds of the jobs in this production."""
        self._handle.check_open()
        return tuple(self._handle.reads.job_kinds())

    def job_history(self, job_id: JobId) -> tuple[JobHistoryEntry, ...]:
        """Every lifecycle event of a job, oldest first."""
        self._handle.check_open()
        check_id("job_id", job_id, JobId)
        return tuple(
            JobHistoryEntry(seq, clocks.from_micros(at), kind, origin, message, principal)
            for seq, at, kind, origin, message, principal in self._handle.reads.job_history(job_id)
        )
