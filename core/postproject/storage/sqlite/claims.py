"""SQLite's own job statements: claims pinned to their index probes, the job insert with its
input check, and how a lease transition ends an attempt (:mod:`.writes` runs them).

Left to itself, SQLite's planner may pick a listing index that does not match the claim order
and sort every ready row on each claim; each candidate of a claim is therefore one index probe
pinned with ``INDEXED BY`` (``tests/core/test_claim_plan.py`` checks the plans).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from postproject.model.jobs import AttemptOutcome
from postproject.storage.sql.leases import (
    CLAIMABLE,
    CLAIMED,
    EXPIRED,
    READY,
    REQUESTED,
    RETURNING_CLAIM,
    SET_CLAIM,
)

# A holder's transition ends its attempt (stopped_at set when the holder ended it itself).
END_ATTEMPT = (
    "UPDATE job_attempts SET outcome = :outcome, ended_at = :now, diagnostic = :diagnostic, "
    "stopped_at = CASE WHEN :stopped THEN :now END WHERE job_id = :id AND outcome IS NULL"
)
# A cancel or requeue ends the running attempt at once and asks its holder to stop: with a
# live lease the holder has until the lease's expiry (stop_by) to confirm; an expired
# claim's attempt is lost. Runs before the job's update, which clears the claim.
STOP_ATTEMPT = (
    "UPDATE job_attempts SET ended_at = :now, diagnostic = NULL, "
    f"stop_by = (SELECT claim_expires_at FROM jobs WHERE id = :id AND state = {CLAIMED} AND claim_expires_at > :now), "
    f"outcome = CASE WHEN (SELECT claim_expires_at FROM jobs WHERE id = :id AND state = {CLAIMED}) > :now "
    f"THEN :outcome ELSE {AttemptOutcome.LOST.code} END WHERE job_id = :id AND outcome IS NULL"
)
# A success: every job that depends on it waits on one job fewer.
RELEASE_DEPENDENTS = "UPDATE jobs SET waiting = waiting - 1 WHERE id IN (SELECT job_id FROM job_dependencies WHERE upstream_id = :id)"


@functools.lru_cache(maxsize=64)
def insert_job_sql(checked_inputs: int | None) -> str:
    """The job insert; with ``checked_inputs`` it writes only when that many inputs
    (``:i0``, ``:i1``, ...) exist (the check rides on the insert: one statement)."""
    columns = (
        "INSERT INTO jobs (id, kind, inputs, output_asset_id, output_kind, target_root, state, "
        "requested_at, requested_sequence, updated_sequence, priority, not_before, available_at, "
        "max_attempts, idempotency_key, request_digest, dependencies, waiting, regenerates) "
    )
    values = (
        f":id, :kind, :inputs, :asset, :output_kind, :root, {REQUESTED}, :now, :seq, :seq, :priority, "
        ":not_before, :available, :max_attempts, :key, :digest, :dependencies, :waiting, :regenerates"
    )
    if checked_inputs is None:
        return columns + f"VALUES ({values})"
    marks = ",".join(f":i{i}" for i in range(checked_inputs))
    check = (
        f"(SELECT count(*) FROM representations WHERE id IN ({marks})) = :count" if checked_inputs else "1"
    )
    return columns + f"SELECT {values} WHERE {check}"


def _claim_first(candidates: Sequence[str]) -> str:
    """The guarded claim of the best of ``candidates`` (priority, then availability, then id)."""
    return (
        f"UPDATE jobs SET {SET_CLAIM} WHERE id = (SELECT id FROM ({' UNION ALL '.join(candidates)}) "
        f"ORDER BY p DESC, a, id LIMIT 1) AND {CLAIMABLE} {RETURNING_CLAIM}"
    )


_EXPIRED = (
    "SELECT * FROM (SELECT priority AS p, claim_expires_at AS a, id FROM jobs INDEXED BY jobs_claimed_expiry "
    f"WHERE {EXPIRED}{{kinds}} ORDER BY claim_expires_at LIMIT 1)"
)
# Any kind: each candidate is one index probe, pinned with INDEXED BY so the planner can never
# fall back to sorting ready rows: the best ready job and the claim that expired first.
CLAIM_ANY = _claim_first(
    (
        "SELECT * FROM (SELECT priority AS p, available_at AS a, id FROM jobs INDEXED BY jobs_ready "
        f"WHERE state = {REQUESTED} AND waiting = 0 AND {READY} ORDER BY priority DESC, available_at, id LIMIT 1)",
        _EXPIRED.format(kinds=""),
    )
)


@functools.lru_cache(maxsize=64)
def claim_of_kinds(count: int) -> str:
    """As :data:`CLAIM_ANY` for ``count`` kinds (``:k0``, ``:k1``, ...): the best ready job of
    each kind and the claim of these kinds that expired first, each one pinned index probe."""
    candidates = [
        "SELECT * FROM (SELECT priority AS p, available_at AS a, id FROM jobs INDEXED BY jobs_ready_kind "
        f"WHERE state = {REQUESTED} AND waiting = 0 AND kind = :k{index} AND {READY} "
        "ORDER BY priority DESC, available_at, id LIMIT 1)"
        for index in range(count)
    ]
    marks = ",".join(f":k{i}" for i in range(count))
    candidates.append(_EXPIRED.format(kinds=f" AND kind IN ({marks})"))
    return _claim_first(candidates)
