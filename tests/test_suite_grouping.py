"""The suite's own scheduling: a test marked ``xdist_group`` reaches pytest-xdist's controller
with its group in its id, so ``--dist loadgroup`` runs the whole group on one worker
(tests/conftest.py, ``_xdist_groups_in_node_ids``). Under pytest 9.2 the group was silently
dropped (pytest-xdist#1386): the wheel was built, and each service module's service started, once
per worker."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("suite_grouping")


def test_a_grouped_test_carries_its_group_in_its_id(request: pytest.FixtureRequest) -> None:
    grouping = bool(getattr(request.config.option, "loadgroup", False))  # an xdist worker under loadgroup
    assert request.node.nodeid.endswith("@suite_grouping") is grouping, request.node.nodeid
