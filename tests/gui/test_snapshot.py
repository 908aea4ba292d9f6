"""``postproject-monitor PRODUCTION --snapshot OUT.png``: a real process, checked against the
production read through the core API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from postproject import JobState, Production
from postproject.knowledge.provenance import RepresentationNode
from tests.gui.helpers import ProductionBuilder, commit_from_another_process, steady_writer
from tests.gui.provenance_fixtures import Chain
from tests.gui.scenes import Demo, build_demo

PNG = b"\x89PNG\r\n\x1a\n"


def monitor(*args: str | Path, wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    command = [sys.executable, "-m", "postproject_gui", *map(str, args)]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    if not wait:
        return subprocess.Popen(command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return subprocess.run(command, env=env, text=True, capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "demo.pproj", datetime.now(UTC))


def test_snapshot_of_a_failed_job_matches_the_production(demo: Demo, tmp_path: Path) -> None:
    out = tmp_path / "shots" / "failed.png"
    job_id = demo.failed[0]
    done = monitor(demo.path, "--snapshot", out, "--filter-state", "failed", "--view", f"job:{job_id}")
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(PNG)
    shown = json.loads(out.with_suffix(".json").read_text())
    with Production.open(demo.path, read_only=True) as production:
        assert shown["head_revision"] == production.latest_revision().sequence  # type: ignore[union-attr]
        assert shown["counts"] == {s.value: n for s, n in production.job_counts().items()}
        failed = production.jobs(state=JobState.FAILED, newest_first=True).items
        assert [(r["id"], r["state"], r["kind"]) for r in shown["rows"]] == [
            (str(j.id), "failed", j.kind) for j in failed
        ]
        job = production.job(job_id)
        selected = shown["selected"]
        assert (
            selected["id"] == str(job_id) and selected["state"] == "failed" and selected["kind"] == job.kind
        )
        assert job.failure is not None and selected["failure_diagnostic"] == job.failure.diagnostic
        assert [h["event"] for h in selected["history"]] == [
            entry.kind for entry in production.job_history(job_id)
        ]
        assert selected["parameters"][0]["name"] == "profile"
    assert shown["diagram"]["variant"] == "job" and shown["diagram"]["highlighted"] == "failed"
    assert shown["filter"]["state"] == "failed" and shown["live"] is True
    assert shown["size"] == [1440, 900]


def test_lifecycle_snapshot_shows_live_counts_and_stuck_claims(demo: Demo, tmp_path: Path) -> None:
    out = tmp_path / "lifecycle.png"
    done = monitor(demo.path, "--snapshot", out, "--view", "lifecycle")
    assert done.returncode == 0, done.stderr
    shown = json.loads(out.with_suffix(".json").read_text())
    assert shown["diagram"]["variant"] == "production" and shown["diagram"]["highlighted"] is None
    assert shown["diagram"]["counts"] == shown["counts"]
    assert shown["counts"]["succeeded"] == len(demo.succeeded) and shown["stuck_claims"] == len(demo.stuck)
    assert shown["selected"] is None and len(shown["rows"]) == sum(shown["counts"].values())


def test_snapshot_waits_for_a_revision_committed_elsewhere(
    builder: ProductionBuilder, tmp_path: Path
) -> None:
    builder.request(1)
    head = builder.production.latest_revision().sequence  # type: ignore[union-attr]
    out = tmp_path / "later.png"
    running = monitor(
        builder.production.location, "--snapshot", out, "--until-revision", head + 1, wait=False
    )
    assert isinstance(running, subprocess.Popen)
    (new_id,) = commit_from_another_process(builder)
    _stdout, stderr = running.communicate(timeout=120)
    assert running.returncode == 0, stderr
    shown = json.loads(out.with_suffix(".json").read_text())
    assert shown["head_revision"] == head + 1 and shown["rows"][0]["id"] == new_id


@pytest.mark.race
def test_until_revision_returns_while_writers_keep_committing(
    builder: ProductionBuilder, tmp_path: Path
) -> None:
    """Another process commits ~150 revisions/s for a minute: the snapshot returns as soon as
    the view has reached revision N, not when the writer stops (it is still writing after)."""
    writer = steady_writer(builder, rate=150, seconds=90)
    try:
        target = builder.production.latest_sequence() + 300  # two seconds of writing ahead
        out = tmp_path / "busy.png"
        done = monitor(
            builder.production.location, "--snapshot", out, "--until-revision", target, "--timeout", "60s"
        )
        assert done.returncode == 0, done.stderr
        assert writer.poll() is None, "the writer stopped before the snapshot returned"
        shown = json.loads(out.with_suffix(".json").read_text())
        assert shown["head_revision"] >= target
        with Production.open(builder.production.location, read_only=True) as production:
            expected = sum(production.job_counts().values())  # every job there is by now
            assert production.latest_sequence() > shown["head_revision"]  # writing went on meanwhile
        assert shown["rows_loaded"] <= expected
    finally:
        writer.terminate()
        writer.communicate(timeout=30)


def test_snapshot_times_out_with_a_message(builder: ProductionBuilder, tmp_path: Path) -> None:
    done = monitor(
        builder.production.location,
        "--snapshot",
        tmp_path / "x.png",
        "--until-revision",
        "99",
        "--timeout",
        "3s",  # it covers opening the production too: that must fit, even beside other tests
    )
    assert done.returncode == 1
    assert "timed out waiting for revision 99" in done.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--view", "table"], 2, "--view must be"),
        (["--view", "provenance:nope"], 2, "--view provenance: needs an id"),
        (["--view", "artifacts", "--filter-state", "failed"], 2, "must be 'stale'"),
        (["--filter-state", "done"], 2, "--filter-state"),
        (["--timeout", "soon"], 2, "--timeout must be a whole number and a unit"),  # the CLI's grammar
        (["--timeout", " 5s"], 2, "--timeout must be a whole number and a unit"),  # no spaces, as there
        (["--timeout", "0s"], 2, "--timeout must be between 1ms and 1h"),
        (["--until-revision", "३"], 2, "--until-revision: must be a whole number"),  # int() takes it
        (["--size", "१४४०x900"], 2, "--size must look like 1440x900"),
    ],
)
def test_snapshot_rejects_bad_arguments(
    builder: ProductionBuilder, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    done = monitor(builder.production.location, "--snapshot", tmp_path / "x.png", *args)
    assert done.returncode == code and message in done.stderr


def test_a_bad_snapshot_option_is_refused_before_qt_loads(tmp_path: Path) -> None:
    """No window (nor Qt) for an option that can never work: the refusal costs a fraction of
    a start-up (0.36 s of CPU instead of 1.2 s here)."""
    script = (
        "import sys\n"
        "from postproject_gui.app import main\n"
        "code = main(sys.argv[1:])\n"
        "print(code, 'PySide6.QtWidgets' in sys.modules)\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            str(tmp_path / "p.pproj"),
            "--snapshot",
            str(tmp_path / "x.png"),
            "--view",
            "table",
        ],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.split() == ["2", "False"], done.stdout + done.stderr
    assert "--view must be" in done.stderr


def test_snapshot_of_a_missing_production_fails(tmp_path: Path) -> None:
    done = monitor(tmp_path / "nope.pproj", "--snapshot", tmp_path / "x.png", "--timeout", "5s")
    assert done.returncode == 3 and "not found" in done.stderr


@pytest.fixture
def changed_chain(production: Production, tmp_path: Path) -> Chain:
    chain = Chain(production, tmp_path / "media")
    chain.change_original()
    return chain


def test_provenance_snapshot_matches_the_production(changed_chain: Chain, tmp_path: Path) -> None:
    chain = changed_chain
    out = tmp_path / "graph.png"
    done = monitor(chain.production.location, "--snapshot", out, "--view", f"provenance:{chain.render}")
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(PNG) and "6 nodes" in done.stdout  # the thumbnail is a sibling
    shown = json.loads(out.with_suffix(".json").read_text())
    with Production.open(chain.production.location, read_only=True) as production:
        graph = production.provenance(chain.render)
        assert shown["head_revision"] == production.latest_sequence()
        assert shown["focus"] == str(chain.render) and shown["truncated"] is False
        nodes = {n["id"]: n for n in shown["nodes"]}
        assert set(nodes) == {str(n.id) for n in graph.nodes}
        for node in graph.nodes:
            if isinstance(node, RepresentationNode):
                entry = nodes[str(node.id)]
                assert entry["state"] == node.state.value and entry["kind"] == node.kind.value
                known = production.evaluate_artifact(node.id)
                assert [r["code"] for r in entry["reasons"]] == [r.code for r in known.reasons]
        assert {(e["source"], e["target"], e["relation"], e["role"]) for e in shown["edges"]} == {
            (str(e.source), str(e.target), e.relation, e.role) for e in graph.edges
        }
        stale = production.stale_artifacts(limit=1000).items
    assert nodes[str(chain.render)]["state"] == "stale" and nodes[str(chain.original)]["shown_as"] == "source"
    assert shown["selected"] == str(chain.render) and shown["selected_node"]["state"] == "stale"
    assert shown["stale_count"] == {"count": len(stale), "complete": True, "examined": 500}


def test_artifacts_snapshot_matches_the_production(changed_chain: Chain, tmp_path: Path) -> None:
    chain = changed_chain
    out = tmp_path / "artifacts.png"
    done = monitor(chain.production.location, "--snapshot", out, "--view", "artifacts")
    assert done.returncode == 0, done.stderr
    shown = json.loads(out.with_suffix(".json").read_text())
    with Production.open(chain.production.location, read_only=True) as production:
        assert shown["head_revision"] == production.latest_sequence()
        expected = [
            {
                "id": str(rep.id),
                "kind": rep.kind.value,
                "path": f"{rep.root}:{rep.path.as_posix()}",
                "availability": production.availability(rep.id).value,
                "state": production.evaluate_artifact(rep.id).state.value,
            }
            for rep in production.representations().items
        ]
        stale = len(production.stale_artifacts(limit=1000).items)
    keys = ("id", "kind", "path", "availability", "state")
    assert [{k: item[k] for k in keys} for item in shown["items"]] == expected
    assert shown["counts"]["stale_or_diverged"] == stale == shown["stale_count"]["count"] == 3
    assert shown["counts"]["by_state"] == {
        "current": 0,
        "indeterminate": 1,
        "stale": 3,
        "diverged": 0,
        "superseded": 0,
    }
    assert shown["counts"]["complete"] is True and shown["filter"] == {"stale_only": False}
