"""Migrations are never edited once they have landed: a production already at a version keeps
the schema that version's file made then, so a change to a landed file reaches new productions
only and the two silently differ. Every migration's SHA-256 (its first 16 hex digits) is pinned
here; a change is a new numbered migration on both engines. A migration not yet landed may
still change: update its pin with it."""

from __future__ import annotations

import hashlib

import pytest

from postproject.storage.sql import versions

PINNED: dict[str, dict[str, str]] = {
    "sqlite": {
        "0007_baseline.sql": "85aa597420ba9783",
        "0008_service.sql": "325562f773166581",
        "0009_job_path.sql": "e3f1be75010cbba3",
        "0010_monitor_scale.sql": "3b8201a99d6f34e2",
        "0011_roles.sql": "169dd386273c4240",
        "0012_job_path_functions.sql": "b459864b4fd307f3",
        "0013_worker_calls.sql": "ad50bccc48df32b1",
        "0014_complete_call.sql": "88f8737df7cf699b",
        "0015_lean_calls.sql": "3ad9d9cdf6d02a6c",
        "0016_claim_reads_first.sql": "dea8da278cbc13a5",
        "0017_complete_inputs_once.sql": "47ea0c7f1e5dff2b",
        "0018_claim_numbered_when_free.sql": "b748685d19de057f",
        "0019_invariant_triggers.sql": "db522c8ac35b3561",
        "0020_fewer_statements.sql": "e663116bfde847e3",
    },
    "postgresql": {
        "0007_baseline.sql": "e5b5fa4d81090f38",
        "0008_service.sql": "7b1954da2a7761fd",
        "0009_job_path.sql": "6b722c1a94b7a792",
        "0010_monitor_scale.sql": "e3a1c3e9e8f61408",
        "0011_roles.sql": "5b83c06ae9e01b5c",
        "0012_job_path_functions.sql": "3680254fd276512f",
        "0013_worker_calls.sql": "48e69ad2c4f49504",
        "0014_complete_call.sql": "2bf1e8ad1d46f99c",
        "0015_lean_calls.sql": "adfd783263869dbc",
        "0016_claim_reads_first.sql": "c9577a529bc39b67",
        "0017_complete_inputs_once.sql": "0ad2a3a6264428e3",
        "0018_claim_numbered_when_free.sql": "5d60290d016ae41a",
        "0019_invariant_triggers.sql": "f0bac467ce74c77b",
        "0020_fewer_statements.sql": "ebe24bb4573ab346",
    },
}


@pytest.mark.parametrize("engine", sorted(PINNED))
def test_no_landed_migration_changed(engine: str) -> None:
    found = {
        name: hashlib.sha256(script).hexdigest()[:16]
        for _, name, script in versions.numbered(f"postproject.storage.{engine}.migrations").files
    }
    changed = sorted(name for name in PINNED[engine] if found.get(name) != PINNED[engine][name])
    assert not changed, (
        f"{engine} migrations changed after they landed (add a new migration instead): {changed}"
    )
    unpinned = sorted(set(found) - set(PINNED[engine]))
    assert not unpinned, f"{engine} migrations without a pin (pin each when it is added): {unpinned}"
