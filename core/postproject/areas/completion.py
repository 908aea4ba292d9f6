"""A worker's completion committed in one call where the engine can (``Production.complete_job``,
:mod:`postproject.completion`; the engine side: :class:`postproject.engine.claims.CommittedCompletions`)."""

from __future__ import annotations

from collections.abc import Callable

from postproject.areas.jobs import JobOperations
from postproject.base.edit import EditState
from postproject.base.leases import InputChangedError, JobLease
from postproject.engine.claims import CompletionRows, InputChangedAtCommit, commits_completions
from postproject.model.ids import RevisionId

RowsOf = Callable[[bytes, bytes, int], CompletionRows]  # (job id, secret hash, guarded now) -> rows


class CompletionOperations:
    """The one-call completion on an edit of its own (given the jobs area for the lease's checks)."""

    def __init__(self, edit: EditState, jobs: JobOperations) -> None:
        self._edit = edit
        self._jobs = jobs

    def complete_committed(
        self, lease: JobLease, rows: RowsOf, committed: tuple[str | None, str | None, str | None]
    ) -> bool:
        """Complete ``lease``'s job with ``rows`` and commit it as revision (origin, message,
        principal) in one call; False, nothing written, when the engine cannot or this process
        does not know the claim as live (the caller runs the completion edit instead). The
        edit is then over: its ``commit`` publishes nothing more and ends the lease."""
        edit = self._edit
        job_id, secret = self._jobs.held(lease)
        with edit.operation(savepoint=False) as s:
            if not commits_completions(s):
                return False
            now = edit.now_guarded()
            origin, message, principal = committed
            revision_id = RevisionId.new()
            revision = (revision_id.bytes, now, origin, message, edit.observed_high)
            try:
                sequence = s.complete_committed(
                    rows(job_id.bytes, secret, now), revision, principal=principal
                )
            except InputChangedAtCommit as exc:  # as commit() raises it for a deferred check
                raise InputChangedError.at_commit(exc) from None
            if sequence is None:
                return False
            edit.called = True
            edit.call_revision = (revision_id, now)
            edit.effects.append((lease, "end", 0))
        return True
