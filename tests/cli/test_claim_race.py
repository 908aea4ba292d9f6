"""Claim races between real ``postproject`` processes: exactly one wins each job."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from postproject import JobRequest, Production, RepresentationKind
from tests.cli.helpers import SCRIPT_DIR, script_env

pytestmark = pytest.mark.race
RACERS = 8


def seeded(tmp_path: Path, jobs: int) -> tuple[Path, list[str]]:
    path = tmp_path / "race.pproj"
    source = tmp_path / "source.mov"
    source.write_bytes(b"source")
    with Production.create(path) as production, production.edit() as tx:
        asset = tx.create_asset("A")
        original = tx.add_representation(asset, RepresentationKind.ORIGINAL, source)
        ids = [
            str(tx.request_job(JobRequest("org.example:race", (original,), asset, RepresentationKind.PROXY)))
            for _ in range(jobs)
        ]
        tx.commit()
    return path, ids


def claimer(path: Path, job: str, token: Path, index: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SCRIPT_DIR / "postproject"), "--json", "job", "claim", str(path), job,
         "--tool-name", "Racer", "--agent-name", f"racer-{index}", "--lease", "5m", "--lease-token-file", str(token)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(),
    )  # fmt: skip


def test_exactly_one_process_wins_a_claim(tmp_path: Path) -> None:
    path, (job,) = seeded(tmp_path, 1)
    tokens = [tmp_path / f"racer-{i}.token" for i in range(RACERS)]
    racers = [claimer(path, job, token, i) for i, token in enumerate(tokens)]
    outcomes = [(p, *p.communicate(timeout=120)) for p in racers]
    codes = sorted(p.returncode for p, _, _ in outcomes)
    assert codes == [0] + [4] * (RACERS - 1), [err for _, _, err in outcomes]
    (winner,) = [i for i, (p, _, _) in enumerate(outcomes) if p.returncode == 0]
    document = json.loads(outcomes[winner][1])
    assert document["state"] == "claimed"
    assert document["claim_agent"] == {"name": f"racer-{winner}"}
    for index, (_, out, err) in enumerate(outcomes):
        if index != winner:
            assert json.loads(out)["error"]["code"] == "conflict"
            assert err.count("\n") == 1 and "Traceback" not in err
            assert not tokens[index].exists()
    assert tokens[winner].stat().st_mode & 0o777 == 0o600
    with Production.open(path) as production:
        latest = production.latest_revision()
        assert latest is not None and latest.sequence == 2


def test_racers_over_several_jobs_each_job_claimed_once(tmp_path: Path) -> None:
    path, jobs = seeded(tmp_path, 3)
    racers = [(job, claimer(path, job, tmp_path / f"{job}-{i}.token", i)) for job in jobs for i in range(3)]
    results = []
    for job, process in racers:
        process.communicate(timeout=120)
        results.append((job, process.returncode))
    for job in jobs:
        assert sorted(code for j, code in results if j == job) == [0, 4, 4]
    assert len(list(tmp_path.glob("*.token"))) == len(jobs)
