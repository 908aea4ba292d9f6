"""Progress, stop confirmations and attempt logs, as SQLite's
(:mod:`postproject.storage.sqlite.progress_writes`).

A progress report is one guarded ``UPDATE`` of the running attempt (fenced by the lease like
a renewal); when the attempt's last signal is at least ``signal_every`` old it also moves
``progress_signalled_at``, and a trigger bumps ``progress_signal.token`` in the same
statement, which also NOTIFYs ``schema progress`` (delivered at commit; no secret), so
progress waits on every host wake without polling. None of it is a revision: the edit commits as stored state only. A cancel that
commits first holds the attempt's row: the report waits for it, then finds the attempt ended.
"""

from __future__ import annotations

from postproject.engine.progress import AttemptFacts
from postproject.model.jobs import AttemptOutcome
from postproject.storage.postgresql.changes import CHANNEL, PROGRESS
from postproject.storage.postgresql.pipeline import Pipeline
from postproject.storage.postgresql.types import Id

LOST = AttemptOutcome.LOST.code
# The index job_attempts_stopping covers exactly these attempts.
_AWAITING_STOP = f"stop_by IS NOT NULL AND stopped_at IS NULL AND outcome <> {LOST}"


class ProgressWrites(Pipeline):
    """The progress statements of :class:`postproject.storage.postgresql.writes.WriteSession`."""

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
        row = self.one(
            "UPDATE job_attempts SET progress_fraction = coalesce(%(fraction)s::double precision, progress_fraction), "
            "progress_stage = coalesce(%(stage)s::text, progress_stage), "
            "progress_message = coalesce(%(message)s::text, progress_message), progress_at = %(now)s, "
            "progress_signalled_at = CASE WHEN progress_signalled_at IS NULL OR progress_signalled_at > %(now)s "
            "OR %(now)s - progress_signalled_at >= %(every)s THEN %(now)s ELSE progress_signalled_at END "
            "WHERE job_id = %(id)s AND outcome IS NULL AND number = (SELECT claim_attempt FROM jobs "
            "WHERE id = %(id)s AND state = 2 AND claim_secret_hash = %(secret)s AND claim_expires_at > %(now)s) "
            "RETURNING number, progress_signalled_at = %(now)s, (SELECT claim_expires_at FROM jobs WHERE id = %(id)s), "
            # A signalling report wakes followers on every host (NOTIFY is sent at commit, and
            # repeats within a transaction fold into one); the payload names only the schema.
            "CASE WHEN progress_signalled_at = %(now)s THEN "
            "(SELECT 1 FROM pg_notify(%(channel)s, current_schema() || ' ' || %(progress)s)) END",
            {
                "id": Id(job_id),
                "secret": secret,
                "now": now,
                "fraction": fraction,
                "stage": stage,
                "message": message,
                "every": signal_every,
                "channel": CHANNEL,
                "progress": PROGRESS,
            },
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0]), bool(row[1]), int(row[2])

    def attempt_facts(self, job_id: bytes, secret: bytes) -> AttemptFacts | None:
        """The attempt ``secret`` claimed (its number, outcome, stop deadline and confirmation)."""
        row = self.one(
            "SELECT number, outcome, stop_by, stopped_at FROM job_attempts WHERE job_id = %s AND secret_hash = %s",
            (Id(job_id), secret),
        )
        return AttemptFacts(*row) if row is not None else None

    def confirm_stop(self, job_id: bytes, secret: bytes, now: int) -> tuple[int, int] | None:
        """The holder of ``secret`` stopped: before the attempt's ``stop_by`` it records
        ``stopped_at`` (the outcome stays), at or after it the attempt ends lost; (attempt
        number, outcome code), or None when that attempt awaits no confirmation."""
        row = self.one(
            "UPDATE job_attempts SET stopped_at = CASE WHEN %(now)s < stop_by THEN %(now)s::bigint END, "
            f"outcome = CASE WHEN %(now)s < stop_by THEN outcome ELSE {LOST} END "
            f"WHERE job_id = %(id)s AND secret_hash = %(secret)s AND {_AWAITING_STOP} RETURNING number, outcome",
            {"id": Id(job_id), "secret": secret, "now": now},
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0]), int(row[1])

    def end_missed_stops(self, now: int, limit: int) -> list[tuple[bytes, int]]:
        """End as lost up to ``limit`` attempts whose holder did not confirm its stop before
        ``stop_by`` (soonest deadline first); (job id, attempt number) of each."""
        found = self.all(
            f"WITH due AS (SELECT job_id, number, stop_by FROM job_attempts WHERE {_AWAITING_STOP} "
            "AND stop_by <= %(now)s ORDER BY stop_by, job_id, number LIMIT %(limit)s FOR UPDATE), "
            f"ended AS (UPDATE job_attempts a SET outcome = {LOST} FROM due "
            "WHERE a.job_id = due.job_id AND a.number = due.number AND a.stop_by IS NOT NULL "
            f"AND a.stopped_at IS NULL AND a.outcome <> {LOST} RETURNING a.job_id, a.number, due.stop_by) "
            "SELECT job_id, number FROM ended ORDER BY stop_by, job_id, number",
            {"now": now, "limit": limit},
        )
        return [(bytes(job), int(number)) for job, number in found]

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
        row = self.one(
            "INSERT INTO job_attempt_logs AS l (job_id, number, root_name, path, tail, tail_at) "
            "SELECT job_id, number, %(root)s::text, %(path)s::text, %(tail)s::text, "
            "CASE WHEN %(tail)s::text IS NOT NULL THEN %(now)s::bigint END "
            "FROM job_attempts WHERE job_id = %(id)s AND secret_hash = %(secret)s "
            "ON CONFLICT (job_id, number) DO UPDATE SET "
            "root_name = CASE WHEN excluded.path IS NOT NULL THEN excluded.root_name ELSE l.root_name END, "
            "path = coalesce(excluded.path, l.path), tail = coalesce(excluded.tail, l.tail), "
            "tail_at = coalesce(excluded.tail_at, l.tail_at) RETURNING number",
            {"id": Id(job_id), "secret": secret, "root": root, "path": path, "tail": tail, "now": now},
        )
        if row is None:
            return None
        self.state_written = True
        return int(row[0])
