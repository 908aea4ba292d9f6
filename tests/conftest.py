"""Shared fixtures: environment hygiene, a fake clock and productions on real files."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from postproject import FakeClock, Production

START = datetime(2026, 1, 1, tzinfo=UTC)

pytest_plugins = ["tests.postgresql_fixtures"]  # postgres_server, postgres_uri, postgres_database


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No POSTPROJECT_* variable, and the user's config and log directories in a scratch
    folder, so neither a developer's own configuration nor CI's leaks into a test."""
    for name in list(os.environ):
        if name.startswith("POSTPROJECT_"):
            monkeypatch.delenv(name)
    home = tmp_path_factory.getbasetemp() / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def production_factory(tmp_path: Path, clock: FakeClock) -> Iterator[Callable[..., Production]]:
    opened: list[Production] = []

    def make(name: str = "production.pproj", **kwargs: object) -> Production:
        kwargs.setdefault("clock", clock)
        production = Production.create(tmp_path / name, **kwargs)  # type: ignore[arg-type]
        opened.append(production)
        return production

    yield make
    for production in opened:
        production.close()


@pytest.fixture
def production(production_factory: Callable[..., Production]) -> Production:
    return production_factory()


@pytest.fixture
def media(tmp_path: Path) -> Callable[[str, bytes], Path]:
    """Write a small media file under tmp_path/media and return its path."""

    def write(name: str, content: bytes = b"essence") -> Path:
        path = tmp_path / "media" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        return path

    return write
