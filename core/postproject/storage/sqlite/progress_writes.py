"""Progress, stop confirmations and attempt logs: stored state of the running attempt.

A progress report is one guarded ``UPDATE`` of the running attempt (fenced by the lease like
a renewal); when the attempt's last signal is at least ``signal_every`` old it also moves
``progress_signalled_at``, and a trigger bumps ``progress_signal.token`` in the same
statement. None of it is a revision: the edit commits as stored state only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from postproject.engine.progress import AttemptFacts
from postproject.model.jobs import AttemptOutcome

LOST = AttemptOutcome.LOST.code
# The index job_attempts_stopping covers exactly these attempts.
_AWAITING_STOP = f"stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> {LOST}"


class ProgressWrites:
    """The progress statements of :class:`postproject.storage.sqlite.writes.WriteSession`."""

    conn: sqlite3.Connection
    state_written: bool

    def _exec(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        raise NotImplementedError

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        raise NotImplementedError

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        raise NotImplementedError

    def report_progress(
        self,
        job_id: bytes,
        secret: bytes,
        now: int,
        fraction: float | None,
        stage: str | None,
        message: str | None,
        signal_every: int,
    ) -> tuple[int, bool, int] | None:
        """Keep the running attempt's latest progress (a None field keeps its value) when
        ``secret`` holds the job's unexpired claim; (attempt number, signalled, lease expiry) or None."""
        row = self._one(
            "UPDATE job_attempts SET progress_fraction = coalesce(:fraction, progress_fraction), "
            "progress_stage = coalesce(:stage, progress_stage), "
            "progress_message = coalesce(:message, progress_message), progress_at = :now, "
            "progress_signalled_at = CASE WHEN progress_signalled_at IS NULL OR progress_signalled_at > :now "
            "OR :now - progress_signalled_at >= :every THEN :now ELSE progress_signalled_at END "
            "WHERE job_id = :id AND outcome IS NULL AND number = (SELECT claim_attempt FROM jobs "
            "WHERE id = :id AND state = 2 AND claim_secret_hash = :secret AND claim_expires_at > :now) "
            "RETURNING number, progress_signalled_at = :now, (SELECT claim_expires_at FROM jobs WHERE id = :id)",
            {
                "id": job_id,
                "secret": secret,
                "now": now,
                "fraction": fraction,
                "stage": stage,
                "message": message,
                "every": signal_every,
            },
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0]), bool(row[1]), int(row[2])

    def attempt_facts(self, job_id: bytes, secret: bytes) -> AttemptFacts | None:
        """The attempt ``secret`` claimed (its number, outcome, stop deadline and confirmation)."""
        row = self._one(
            "SELECT number, outcome, stop_by, stopped_at FROM job_attempts WHERE job_id = ? AND secret_hash = ?",
            (job_id, secret),
        )
        return AttemptFacts(*row) if row is not None else None

    def confirm_stop(self, job_id: bytes, secret: bytes, now: int) -> tuple[int, int] | None:
        """The holder of ``secret`` stopped: before the attempt's ``stop_by`` it records
        ``stopped_at`` (the outcome stays), at or after it the attempt ends lost; (attempt
        number, outcome code), or None when that attempt awaits no confirmation."""
        row = self._one(
            "UPDATE job_attempts SET stopped_at = CASE WHEN :now < stop_by THEN :now END, "
            f"outcome = CASE WHEN :now < stop_by THEN outcome ELSE {LOST} END "
            f"WHERE job_id = :id AND secret_hash = :secret AND {_AWAITING_STOP} RETURNING number, outcome",
            {"id": job_id, "secret": secret, "now": now},
        )
        return (int(row[0]), int(row[1])) if row is not None else None

    def end_missed_stops(self, now: int, limit: int) -> list[tuple[bytes, int]]:
        """End as lost up to ``limit`` attempts whose holder did not confirm its stop before
        ``stop_by`` (soonest deadline first); (job id, attempt number) of each."""
        return [
            (bytes(job), int(number))
            for job, number in self._all(
                f"UPDATE job_attempts SET outcome = {LOST} WHERE (job_id, number) IN (SELECT job_id, number "
                f"FROM job_attempts INDEXED BY job_attempts_stopping WHERE {_AWAITING_STOP} AND stop_by <= :now "
                "ORDER BY stop_by LIMIT :limit) RETURNING job_id, number",
                {"now": now, "limit": limit},
            )
        ]

    def record_attempt_log(
        self,
        job_id: bytes,
        secret: bytes,
        root: str | None,
        path: str | None,
        tail: str | None,
        now: int,
    ) -> int | None:
        """Record where the attempt ``secret`` claimed keeps its full log and/or its tail (a
        None argument keeps what was recorded); the attempt number, or None when ``secret``
        claimed no attempt of the job."""
        row = self._one(
            "INSERT INTO job_attempt_logs (job_id, number, root_name, path, tail, tail_at) "
            "SELECT job_id, number, :root, :path, :tail, CASE WHEN :tail IS NOT NULL THEN :now END "
            "FROM job_attempts WHERE job_id = :id AND secret_hash = :secret "
            "ON CONFLICT (job_id, number) DO UPDATE SET "
            "root_name = CASE WHEN excluded.path IS NOT NULL THEN excluded.root_name ELSE root_name END, "
            "path = coalesce(excluded.path, path), tail = coalesce(excluded.tail, tail), "
            "tail_at = coalesce(excluded.tail_at, tail_at) RETURNING number",
            {"id": job_id, "secret": secret, "root": root, "path": path, "tail": tail, "now": now},
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0])
