"""Shared fixtures: environment hygiene, a fake clock and productions on both engines.

Every test that takes ``production``, ``production_factory`` or ``production_location`` (or
the CLI's and executor's fixtures built on them) runs once per engine: ``[sqlite]`` on real
files, ``[postgresql]`` in a schema of the session's throwaway server. A test about SQLite
files says so with ``@pytest.mark.sqlite_only("why")`` and runs on SQLite alone.
``PP_TEST_ENGINES=sqlite`` (or ``postgresql``) narrows a local run to one engine.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from postproject import FakeClock, Production

START = datetime(2026, 1, 1, tzinfo=UTC)
ENGINES = ("sqlite", "postgresql")
# The monitor's test modules that run on both engines: a representative set. The monitor
# reaches an engine only through ProductionService and FeedWatcher (services/), so these cover
# opening a production, live updates from other processes, progress, reconnecting, the window,
# snapshots and workers; every other GUI test runs on SQLite alone, which keeps the suite short
# (running all of them twice would add about four minutes).
GUI_ON_BOTH_ENGINES = frozenset(
    {
        "test_services.py",
        "test_busy_and_feed.py",
        "test_main_window.py",
        "test_progress.py",
        "test_gui_thread.py",
        "test_workers.py",
        "test_snapshot.py",
        "test_dashboard.py",
        "test_notifications.py",
        "test_knowledge_window.py",
        "test_actions_and_dialogs.py",
        "test_monitor_postgresql.py",
        "test_monitor_scale.py",
    }
)
_schemas = itertools.count(1)

pytest_plugins = ["tests.postgresql_fixtures"]  # postgres_server, postgres_uri, postgres_database


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only(reason): a test about SQLite files; not run on PostgreSQL"
    )
    # Tests send Ctrl-C (SIGINT) to processes they spawn. A shell without job control starts a
    # background job with SIGINT ignored, and an ignored signal stays ignored across exec: then
    # Python never installs its KeyboardInterrupt handler in those processes. Catching it here
    # gives them the default disposition again, as from a terminal.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One run per engine for every test whose fixtures make productions."""
    if "engine_kind" not in metafunc.fixturenames:
        return
    wanted = [e for e in os.environ.get("PP_TEST_ENGINES", ",".join(ENGINES)).split(",") if e in ENGINES]
    parts = Path(metafunc.definition.path).relative_to(Path(__file__).parent).parts
    one_engine = parts[0] == "gui" and parts[-1] not in GUI_ON_BOTH_ENGINES
    sqlite_only = metafunc.definition.get_closest_marker("sqlite_only") or one_engine
    engines = ["sqlite"] if sqlite_only else wanted
    metafunc.parametrize("engine_kind", engines or ["sqlite"])


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
def production_location(
    engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], str]:
    """Where a production named ``name`` (a file name) lives on the engine under test: a path
    under ``tmp_path``, or a URI naming a schema of its own. On PostgreSQL the password is in
    ``PGPASSWORD`` too, so a production's ``location`` (which never shows it) opens it again."""
    if engine_kind == "sqlite":
        return lambda name: str(tmp_path / name)
    from tests.postgresql_fixtures import SHARED_DATABASE

    server = request.getfixturevalue("postgres_server")
    monkeypatch.setenv("PGPASSWORD", server.password)
    prefix = f"t{next(_schemas)}"

    def location(name: str) -> str:
        slug = re.sub(r"[^a-z0-9_]+", "_", Path(name).stem.lower()).strip("_") or "p"
        return server.uri(SHARED_DATABASE, production=f"{prefix}_{slug}"[:63])

    return location


@pytest.fixture
def production_factory(
    production_location: Callable[[str], str], clock: FakeClock
) -> Iterator[Callable[..., Production]]:
    opened: list[Production] = []

    def make(name: str = "production.pproj", **kwargs: object) -> Production:
        kwargs.setdefault("clock", clock)
        production = Production.create(production_location(name), **kwargs)  # type: ignore[arg-type]
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
