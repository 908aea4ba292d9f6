"""The workers area of a production: registered workers and their attempts.

``Production`` builds one :class:`WorkerReads`, given its handle, and delegates ``workers``
and ``worker_attempts`` to it (their public docstrings are on
:class:`postproject.production.Production`); the pending area asks it which workers are
online. Registering and heartbeats are the farm area's (:mod:`postproject.areas.farm`).
"""

from __future__ import annotations

from datetime import timedelta

from postproject.base.handle import ProductionHandle
from postproject.model import clock as clocks
from postproject.model import names
from postproject.model.ids import JobId
from postproject.model.jobs import Attempt, AttemptOutcome
from postproject.model.pages import check_limit
from postproject.model.workers import OFFLINE_AFTER, Worker, WorkerState


class WorkerReads:
    """Registered workers and their attempts."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def workers(self) -> list[Worker]:
        """Every registered worker, by name, with liveness derived from its last heartbeat."""
        self._handle.check_open()
        now = self._handle.now_micros()
        offline_after = OFFLINE_AFTER // timedelta(microseconds=1)
        reads = self._handle.reads
        with reads.snapshot():
            registered = reads.registered_workers()
            running: dict[bytes, list[JobId]] = {}
            for worker, job in reads.running_claims(now):
                running.setdefault(worker, []).append(JobId(job))
            outcomes: dict[bytes, dict[AttemptOutcome, int]] = {}
            for worker, code, count in sorted(reads.attempt_outcomes()):
                outcomes.setdefault(worker, {})[AttemptOutcome.from_code(code)] = count
        return [
            Worker(
                name=name,
                host=host,
                state=WorkerState.ONLINE if now - last_seen <= offline_after else WorkerState.OFFLINE,
                last_seen=clocks.from_micros(last_seen),
                capacity=capacity,
                kinds=kinds,
                running=tuple(running.get(id_, ())),
                outcomes=outcomes.get(id_, {}),
                registered_at=clocks.from_micros(registered_at),
            )
            for id_, name, host, registered_at, last_seen, capacity, kinds in registered
        ]

    def worker_attempts(self, name: str, limit: int = 100) -> tuple[tuple[JobId, Attempt], ...]:
        """The newest attempts of the worker ``name``: (job id, attempt), newest first."""
        self._handle.check_open()
        check_limit(limit)
        names.bounded_text("worker name", name, 256)
        return tuple(
            (JobId(job), attempt) for job, attempt in self._handle.reads.worker_attempts(name, limit)
        )
