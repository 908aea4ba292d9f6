"""Headless snapshots for automation and documentation.

``postproject-monitor PRODUCTION --snapshot OUT.png`` opens the window offscreen, waits until
the view reflects revision N (``--until-revision``, default the head when it opened) with
no page, update or detail still loading, saves the window as OUT.png and writes OUT.json
describing what the view shows. The README's screenshots are made with it.

Views: ``jobs``, ``lifecycle``, ``job:JOB_ID`` (the Jobs tab), ``artifacts`` (the Artifacts
tab; ``--filter-state stale`` lists only stale or diverged ones), ``provenance:REP_ID``
(the Provenance tab: the graph of that representation, framed, its focus selected),
``dashboard`` (the Dashboard tab: the Jobs document plus the series ``throughput``,
``failure_rate``, ``backlog`` and ``utilisation`` over the last hour) and ``workers`` (the
Workers tab: the Jobs document plus ``workers``, each with ``name`` and ``state``, and the
attempts of the selected worker). Snapshots never change the production: no loss sweep.

Every document says the window ``size`` it was rendered at ([width, height]; ``--size``).
``--search TEXT`` runs the job table's store-wide search first (the rows are its matches).
Writers may keep committing while a snapshot waits: once the view has reached revision N it
stops following the feed, so the picture and the JSON are of one revision (N or later).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from postproject import ArtifactState, JobId, JobState, RepresentationId
from postproject.model.clock import monotonic
from postproject.model.workers import Worker
from postproject_gui.launch.snapshot_options import SnapshotError, SnapshotOptions
from postproject_gui.models.documents import artifacts_document
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import JobDetail, JobRow, liveness, used
from postproject_gui.session.monitor_session import MonitorSession
from postproject_gui.text import params
from postproject_gui.window.knowledge_tabs import ARTIFACTS, PROVENANCE
from postproject_gui.window.main_window import DASHBOARD, WORKERS, MainWindow

MAX_ROWS = 1000


async def take(window: MainWindow, production: str | Path, options: SnapshotOptions) -> dict[str, Any]:
    """Open ``production`` in ``window``, wait, save the PNG and JSON; the JSON document."""
    options.check()
    deadline = monotonic() + options.timeout.total_seconds()
    window.resize(*options.size)
    if options.view == "lifecycle":
        window.splitter.setSizes([700, 740])
    window.show()
    session = window.open_production(production)
    await _until(lambda: session.info is not None, deadline, window, "the production to open")
    assert session.info is not None
    target = options.until_revision if options.until_revision is not None else session.info.head
    _apply_filter(session, options)
    await _until(
        lambda: session.applied_revision >= target and session.live,
        deadline,
        window,
        f"revision {target}",
        session,
    )
    session.hold()  # writers may keep committing: the picture is of the revision reached
    await _until(
        lambda: _settled(window, session, target, None), deadline, window, f"revision {target}", session
    )
    if options.job_id is not None:
        window.select_job(options.job_id)
        await _until(
            lambda: _settled(window, session, target, options.job_id), deadline, window, "the job", session
        )
    if options.tab == "artifacts":
        await _artifacts(window, session, options, target, deadline)
    elif options.rep_id is not None:
        await _provenance(window, session, options.rep_id, target, deadline)
    elif options.view == "dashboard":
        window.tabs.setCurrentIndex(DASHBOARD)
        await _until(lambda: window.dashboard.ready, deadline, window, "the dashboard", session)
        window.dashboard.redraw()
    elif options.view == "workers":
        window.tabs.setCurrentIndex(WORKERS)
        await _until(lambda: window.workers.ready, deadline, window, "the workers", session)
        window.workers.model.tick()
    await asyncio.sleep(0.05)  # let the last paint land
    if options.tab == "artifacts":
        document = describe_artifacts(window, session, options)
    elif options.tab == "provenance":
        document = describe_provenance(window, session, options)
    elif options.view == "dashboard":
        document = describe_dashboard(window, session, options)
    elif options.view == "workers":
        document = describe_workers(window, session, options)
    else:
        document = describe(window, session, options)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(options.out)):
        raise SnapshotError(f"cannot write {options.out}", 7)
    options.out.with_suffix(".json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return document


def _apply_filter(session: MonitorSession, options: SnapshotOptions) -> None:
    if options.tab == "artifacts":
        return  # "stale" is the Artifacts tab's filter
    if options.state == "stuck":
        session.set_filter(JobFilter(stuck=True, text=options.search))
    elif options.state is not None:
        session.set_filter(JobFilter(state=JobState(options.state), text=options.search))
    elif options.search:
        session.set_filter(JobFilter(text=options.search))


async def _artifacts(
    window: MainWindow, session: MonitorSession, options: SnapshotOptions, target: int, deadline: float
) -> None:
    window.tabs.setCurrentIndex(ARTIFACTS)
    window.knowledge.artifacts.set_attention(options.state == "stale")
    model = session.knowledge.artifacts

    def loaded() -> bool:
        if model.started and not model.loading and not model.exhausted and model.rowCount() < MAX_ROWS:
            model.fetchMore()
        return _settled(window, session, target, None) and model.started and not model.loading

    await _until(loaded, deadline, window, "the artifacts", session)


async def _provenance(
    window: MainWindow, session: MonitorSession, rep_id: RepresentationId, target: int, deadline: float
) -> None:
    window.knowledge.show_graph(rep_id)
    knowledge, tab = session.knowledge, window.knowledge.provenance

    def drawn() -> bool:
        read = knowledge.graph
        return (
            _settled(window, session, target, None)
            and read is not None
            and read.graph.focus == rep_id
            and read.revision >= target
            and tab.read is read
        )

    await _until(drawn, deadline, window, "the provenance graph", session)
    assert window.tabs.currentIndex() == PROVENANCE
    tab.view.frame()


def _settled(window: MainWindow, session: MonitorSession, target: int, job_id: JobId | None) -> bool:
    if session.applied_revision < target or session.busy or not session.live:
        return False
    if session.knowledge.stale is None:
        return False
    if job_id is not None:
        return window.detail.detail is not None and window.detail.detail.job.id == job_id
    return True


async def _until(
    condition: Callable[[], bool],
    deadline: float,
    window: MainWindow,
    what: str,
    session: MonitorSession | None = None,
) -> None:
    while not condition():
        failure = window.presenter.last
        if failure is not None:
            raise SnapshotError(
                f"{failure.title}: {failure.text.splitlines()[0]}", 3 if "not found" in failure.title else 7
            )
        if monotonic() > deadline:
            at = f" (the view is at revision {session.applied_revision})" if session is not None else ""
            raise SnapshotError(f"timed out waiting for {what}{at}", 1)
        await asyncio.sleep(0.02)


def describe(window: MainWindow, session: MonitorSession, options: SnapshotOptions) -> dict[str, Any]:
    now = session.now()
    counts = session.counts.by_state if session.counts else {}
    outlook = session.outlook
    scene = window.detail.scene.state
    assert session.info is not None
    return {
        "production": session.info.shown,
        "production_id": str(session.info.id),
        "head_revision": session.applied_revision,
        "view": options.view,
        "filter": _filter(session.filter),
        "counts": {state.value: counts.get(state, 0) for state in JobState},
        "stuck_claims": len(outlook.stuck(now)) if outlook else 0,
        "expiring_claims": len(outlook.expiring(now)) if outlook else 0,
        "rows": [_row(r, now) for r in session.table.rows()[:MAX_ROWS]],
        "rows_loaded": session.table.rowCount(),
        "selected": _selected(window.detail.detail, now) if window.detail.detail else None,
        "diagram": {
            "variant": scene.variant,
            "highlighted": scene.highlighted.value if scene.highlighted else None,
            "travelled": [
                {"from": s.value if s else None, "to": t.value, "times": n}
                for (s, t), n in scene.travelled.items()
            ],
            "offered": [t.action.value for t in scene.offered],
            "counts": {s.value: n for s, n in scene.counts.items()},
        },
        "stale_count": _stale(session),
        "live": session.live,
        "image": str(options.out),
        "size": [window.width(), window.height()],
    }


def describe_dashboard(
    window: MainWindow, session: MonitorSession, options: SnapshotOptions
) -> dict[str, Any]:
    """The Dashboard tab: the Jobs document, the headline figures and the series drawn."""
    tab = window.dashboard
    assert tab.series is not None
    return {
        **describe(window, session, options),
        **tab.series.document(),
        "figures": {key: label.text() for key, label in tab.figures.items()},
        "complete": tab.data.complete,
    }


def describe_workers(window: MainWindow, session: MonitorSession, options: SnapshotOptions) -> dict[str, Any]:
    """The Workers tab: the Jobs document, the workers shown (in the table's order) and the
    attempts of the selected one."""
    tab, now = window.workers, session.now()
    read = session.workers.current
    return {
        **describe(window, session, options),
        "workers": [_worker(w, now) for w in tab.model.workers()],
        "workers_read_at": read.read_at.isoformat() if read else None,
        "selected_worker": tab.selected_name(),
        "attempts": [
            {
                "job_id": str(a.job_id),
                "kind": a.kind,
                "number": a.attempt.number,
                "outcome": a.attempt.outcome.value if a.attempt.outcome else None,
                "claimed_at": a.attempt.claimed_at.isoformat(),
                "ended_at": a.attempt.ended_at.isoformat() if a.attempt.ended_at else None,
                "diagnostic": a.attempt.diagnostic,
            }
            for a in tab.attempts.attempts()
        ],
        "summary": tab.summary.text(),
    }


def _worker(worker: Worker, now: datetime) -> dict[str, Any]:
    return {
        "name": worker.name,
        "state": liveness(worker, now).value,
        "host": worker.host,
        "last_seen": worker.last_seen.isoformat(),
        "capacity": worker.capacity,
        "used": used(worker),
        "kinds": list(worker.kinds) if worker.kinds is not None else None,
        "running": [str(j) for j in worker.running],
        "succeeded": worker.succeeded,
        "failed": worker.failed,
        "outcomes": {o.value: n for o, n in worker.outcomes.items()},
    }


def _head(session: MonitorSession, options: SnapshotOptions, window: MainWindow) -> dict[str, Any]:
    assert session.info is not None
    return {
        "production": session.info.shown,
        "production_id": str(session.info.id),
        "head_revision": session.applied_revision,
        "view": options.view,
    }


def _tail(session: MonitorSession, options: SnapshotOptions, window: MainWindow) -> dict[str, Any]:
    return {"live": session.live, "image": str(options.out), "size": [window.width(), window.height()]}


def _stale(session: MonitorSession) -> dict[str, Any] | None:
    stale = session.knowledge.stale
    if stale is None:
        return None
    return {"count": stale.count, "complete": stale.complete, "examined": stale.examined}


def describe_artifacts(
    window: MainWindow, session: MonitorSession, options: SnapshotOptions
) -> dict[str, Any]:
    """The Artifacts tab: the rows shown (in the table's order) and the counts."""
    model, proxy = session.knowledge.artifacts, session.knowledge.proxy
    shown = [model.row(proxy.mapToSource(proxy.index(r, 0)).row()) for r in range(proxy.rowCount())]
    loaded = model.rows()
    by_state = {state.value: sum(1 for row in loaded if row.state is state) for state in ArtifactState}
    return {
        **_head(session, options, window),
        "filter": {"stale_only": proxy.attention_only},
        "items": artifacts_document(shown)["items"],
        "counts": {
            "artifacts": len(loaded),
            "shown": len(shown),
            "complete": model.exhausted,
            "by_state": by_state,
            "stale_or_diverged": model.stale_count,
        },
        "stale_count": _stale(session),
        **_tail(session, options, window),
    }


def describe_provenance(
    window: MainWindow, session: MonitorSession, options: SnapshotOptions
) -> dict[str, Any]:
    """The Provenance tab: the scene's nodes (with knowledge states and reasons) and edges."""
    tab = window.knowledge.provenance
    selected = tab.scene.selected_id()
    return {
        **_head(session, options, window),
        **tab.scene.describe(),
        "selected_node": tab.scene.node_document(selected) if selected else None,
        "zoom": round(tab.view.zoom(), 4),
        "stale_count": _stale(session),
        **_tail(session, options, window),
    }


def _filter(flt: JobFilter) -> dict[str, Any]:
    return {
        "state": flt.state.value if flt.state else None,
        "kind": flt.kind,
        "text": flt.text,
        "stuck": flt.stuck,
        "newest_first": flt.newest_first,
        "sort": flt.sort,
        "requested_within": flt.requested_within,
        "finished_within": flt.finished_within,
    }


def _row(row: JobRow, now: Any) -> dict[str, Any]:
    job = row.job
    health = row.health(now)
    return {
        "id": str(job.id),
        "state": job.state.value,
        "claim_health": health.value if health else None,
        "kind": job.kind,
        "output_asset_id": str(job.output_asset_id),
        "output_name": row.output_name,
        "output_kind": job.output_representation_kind.value,
        "inputs": [str(i) for i in job.inputs[:20]],
        "claimed_by": _claim(job)["tool"] if job.claim else None,
        "worker": job.claim.worker if job.claim else None,
        "priority": job.priority,
        "diagnostic": job.failure.diagnostic if job.failure else None,
    }


def _claim(job: Any) -> dict[str, Any]:
    claim = job.claim
    return {
        "tool": str(claim.tool),
        "agent": str(claim.agent) if claim.agent else None,
        "worker": claim.worker,
        "attempt": claim.attempt,
        "claimed_at": claim.claimed_at.isoformat(),
        "expires_at": claim.expires_at.isoformat(),
    }


def _selected(detail: JobDetail, now: Any) -> dict[str, Any]:
    job = detail.job
    health = detail.row.health(now)
    return {
        "id": str(job.id),
        "kind": job.kind,
        "state": job.state.value,
        "claim_health": health.value if health else None,
        "inputs": [str(i) for i in job.inputs],
        "output_asset_id": str(job.output_asset_id),
        "output_name": detail.row.output_name,
        "output_kind": job.output_representation_kind.value,
        "target_root": job.target_root,
        "requested_at": job.requested_at.isoformat(),
        "updated_sequence": job.updated_sequence,
        "claim": _claim(job) if job.claim else None,
        "completion": {
            "representation_id": str(job.completion.representation_id),
            "activity_id": str(job.completion.activity_id),
        }
        if job.completion
        else None,
        "failure_diagnostic": job.failure.diagnostic if job.failure else None,
        "priority": job.priority,
        "not_before": job.not_before.isoformat() if job.not_before else None,
        "max_attempts": job.max_attempts,
        "retry_of": str(job.retry_of) if job.retry_of else None,
        "retried_as": str(job.retried_as) if job.retried_as else None,
        "attempts": [
            {
                "number": a.number,
                "outcome": a.outcome.value if a.outcome else None,
                "worker": a.worker,
                "agent": str(a.agent) if a.agent else None,
                "tool": str(a.tool),
                "claimed_at": a.claimed_at.isoformat(),
                "ended_at": a.ended_at.isoformat() if a.ended_at else None,
                "diagnostic": a.diagnostic,
            }
            for a in job.attempts
        ],
        "parameters": [
            {"vocabulary": a.property.vocabulary, "name": a.property.name, "type": t, "value": v}
            for a in detail.parameters
            for t, v in [params.display(a.value)]
        ],
        "history": [
            {
                "sequence": h.sequence,
                "committed_at": h.committed_at.isoformat(),
                "event": h.event,
                "origin": h.origin,
                "message": h.message,
            }
            for h in detail.history
        ],
    }
