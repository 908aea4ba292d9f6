"""The engine contract: every adapter of :mod:`postproject.engine` must pass these tests.

``engine_factory`` makes a fresh engine of each adapter under test; the public-API pins in
this folder use the suite's ``production_factory``, which runs them on every engine too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postproject import ProductionId, locations
from postproject.engine import Engine
from postproject.model.clock import to_micros
from tests.conftest import START

ADAPTERS = ["sqlite", "postgresql"]


@pytest.fixture(params=ADAPTERS)
def engine_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Engine]]:
    """Create (first call) or open again (later calls) one production on the adapter under test."""
    opened: list[Engine] = []
    location: str | Path = (
        request.getfixturevalue("postgres_uri")
        if request.param == "postgresql"
        else tmp_path / "contract.pproj"
    )

    def make() -> Engine:
        if not opened:
            engine = locations.create_engine(location, ProductionId.new().bytes, to_micros(START))
        else:
            engine = locations.open_engine(location, read_only=False)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()
