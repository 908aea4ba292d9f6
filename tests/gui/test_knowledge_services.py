"""The service's artifact, provenance and regeneration reads and the enqueue write, and the
newer core reads the monitor adopted (revision summaries, history origin and message, stuck
claims by kind)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from postproject import JobState, Production, RepresentationId
from postproject_gui.models.event_log_model import OLDER_PAGE, EventLogModel
from postproject_gui.services import knowledge_reads
from postproject_gui.services.production_service import ProductionService
from postproject_gui.services.types import StoreQuery
from tests.gui.helpers import THUMB, LoopRunner, ProductionBuilder
from tests.gui.provenance_fixtures import Chain, add_ambiguous


@pytest.fixture
def chain(production: Production, tmp_path: Path) -> Chain:
    return Chain(production, tmp_path / "media")


@pytest.fixture
def service(production: Production, chain: Chain, qloop: LoopRunner) -> Iterator[ProductionService]:
    svc = ProductionService(production.path, clock=production.clock, loop=qloop.loop)
    qloop.run(svc.open())
    yield svc
    svc.close()


def test_graph_of_a_representation_and_of_a_job_on_a_reader_thread(
    service: ProductionService, chain: Chain, qloop: LoopRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    original = knowledge_reads.provenance

    def spy(*args: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(*args)

    monkeypatch.setattr(knowledge_reads, "provenance", spy)
    chain.change_original()
    read = qloop.run(service.provenance(chain.render))
    assert seen and all(name.startswith("pp-reader") for name in seen)
    assert read.graph.focus == chain.render and read.revision == chain.production.latest_sequence()
    assert read.knowledge[chain.render] == chain.production.evaluate_artifact(chain.render)
    assert set(read.knowledge) == {n.id for n in read.graph.nodes if n.id in read.knowledge}
    assert qloop.run(service.provenance_for_job(chain.job)).graph.focus == chain.proxy  # what it produced


def test_plans_each_artifact_on_its_own_and_enqueues_them_in_one_revision(
    service: ProductionService, chain: Chain, qloop: LoopRunner
) -> None:
    conform = add_ambiguous(chain)
    chain.change_original()
    preview = qloop.run(service.plan_regeneration([chain.render, conform, chain.original, chain.proxy]))
    assert {p.artifact_id for p in preview.plans} == {chain.render, chain.proxy}
    assert {(u.artifact_id, u.code) for u in preview.unplannable} == {
        (conform, "producing_activity_ambiguous"),
        (chain.original, "producing_activity_missing"),
    }
    assert preview.rows[chain.proxy].label == "A001_C002 · proxy" and chain.original in preview.rows
    head = chain.production.latest_sequence()
    outcome = qloop.run(service.enqueue_plans(preview.plans))
    assert outcome.revision == head + 1 == chain.production.latest_sequence()
    jobs = [chain.production.job(j) for j in outcome.job_ids]
    assert [j.output_representation_kind for j in jobs] == [
        p.job.output_representation_kind for p in preview.plans
    ]
    assert all(j.state is JobState.REQUESTED for j in jobs)
    downstream = qloop.run(service.plan_downstream(chain.original))
    assert downstream.plans[0].artifact_id == chain.proxy and not downstream.truncated


def test_rows_count_and_what_a_change_touches(
    service: ProductionService, chain: Chain, qloop: LoopRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = qloop.run(service.artifact_page(None, 2))
    assert [r.id for r in page.rows] == [chain.original, chain.proxy] and page.next_cursor is not None
    assert qloop.run(service.stale_count()).count == 0
    chain.change_original()
    rows = qloop.run(service.artifact_rows([chain.render, RepresentationId(bytes(16))]))
    assert rows[chain.render] is not None and rows[chain.render].state is not None
    assert rows[RepresentationId(bytes(16))] is None
    counted = qloop.run(service.stale_count())
    assert (counted.count, counted.complete, counted.text) == (3, True, "3")
    monkeypatch.setattr(knowledge_reads, "STALE_PAGE", 1)
    monkeypatch.setattr(knowledge_reads, "STALE_SCAN", 2)  # examines 2 of the 3 candidates
    bounded = knowledge_reads.stale_count(chain.production)
    assert (bounded.count, bounded.complete, bounded.text) == (2, False, "2+")
    change = qloop.run(service.knowledge_change([chain.original]))
    assert change.complete and change.representations == {
        chain.original,
        chain.proxy,
        chain.render,
        chain.thumbnail,
    }
    by_activity = qloop.run(service.knowledge_change([], [chain.proxy_activity], [chain.job]))
    assert by_activity.representations == {chain.proxy, chain.render}


def test_prov_export_runs_on_a_reader_thread(
    service: ProductionService, chain: Chain, qloop: LoopRunner, tmp_path: Path
) -> None:
    written = qloop.run(service.export_prov([chain.render], "json", tmp_path / "render.json"))
    document = json.loads(written.read_text())
    assert "entity" in document and "activity" in document


def test_event_log_starts_from_summaries_and_reads_older_ones(
    service: ProductionService, chain: Chain, qloop: LoopRunner
) -> None:
    summaries = qloop.run(service.revisions(2))
    head = chain.production.latest_sequence()
    assert [s.sequence for s in summaries] == [head, head - 1]
    model = EventLogModel()
    model.add(summaries)
    asked: list[int] = []
    model.set_loader(asked.append)
    assert model.canFetchMore()
    model.fetchMore()
    assert asked == [head - 1] and not model.canFetchMore()  # one request at a time
    model.older_loaded(qloop.run(service.revisions(OLDER_PAGE, asked[0])), asked[0])
    assert [model.entry(r).sequence for r in range(model.rowCount())] == list(range(head, 0, -1))
    assert not model.canFetchMore()  # the first revision is listed
    newest = model.entry(0)
    assert newest.events == 7 and "representation_added ×2" in newest.summary


def test_history_names_who_and_why_and_stuck_claims_filter_by_kind(
    qloop: LoopRunner, builder: ProductionBuilder, clock: Any
) -> None:
    proxies, thumbs = builder.request(2), builder.request(1, THUMB)
    for job in (*proxies, *thumbs):
        builder.claim(job, seconds=10)
    with builder.production.edit(origin="wrangler-app 2.0", message="Client changed the cut") as tx:
        tx.cancel_job(proxies[1])
        tx.commit()
    clock.advance(timedelta(seconds=30))
    svc = ProductionService(builder.production.path, clock=clock, loop=qloop.loop)
    try:
        qloop.run(svc.open())
        detail = qloop.run(svc.job_detail(proxies[1]))
        last = detail.history[-1]
        assert (last.event, last.origin, last.message) == (
            "job_cancelled",
            "wrangler-app 2.0",
            "Client changed the cut",
        )
        query = StoreQuery(kind=THUMB, claims_before=clock.now())
        page = qloop.run(svc.jobs_page(query, None, 10))
        assert [r.id for r in page.rows] == thumbs
        assert qloop.run(svc.head()) == builder.production.latest_sequence()
    finally:
        svc.close()
