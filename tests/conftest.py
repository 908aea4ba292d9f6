"""Shared fixtures: environment hygiene, a fake clock and productions on both engines.

Every test that takes ``production``, ``production_factory`` or ``production_location`` (or
the CLI's and executor's fixtures built on them) runs once per engine: ``[sqlite]`` on real
files, ``[postgresql]`` in a schema of the session's throwaway server. A test about SQLite
files says so with ``@pytest.mark.sqlite_only("why")`` and runs on SQLite alone.
``PP_TEST_ENGINES=sqlite`` (or ``postgresql``) narrows a local run to one engine.

``production_factory`` makes an empty SQLite production as a copy of a template made once per
session (tests/production_template.py: the real ``Production.create``, then a new id, cursor key
and creation time per copy), a few milliseconds instead of tens; on PostgreSQL, where it can, in
a schema an earlier test used, reset (tests/postgresql_recycling.py).

Under pytest-xdist (``python3 dev.py test``) each worker is a process of its own: it has its own
``tmp_path`` tree, template, PostgreSQL server and schema names (tests/postgresql_fixtures.py).
"""

from __future__ import annotations

import gc
import itertools
import os
import re
import signal
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from postproject import FakeClock, Production
from tests import production_template
from tests.postgresql_recycling import SchemaRecycler

# Hypothesis without its per-example deadline: a deadline is a wall-clock assertion, and a
# loaded CI machine (tests in parallel) missed the 200 ms default on a plain round trip.
settings.register_profile("postproject", deadline=None)
settings.load_profile("postproject")

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


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: object) -> Iterator[object]:
    """Under pytest-xdist a worker sends each report to the controller as UTF-8, and a lone
    surrogate (a file name's stray bytes, which some tests log or compare on purpose) in its
    captured output or failure text would end the worker: such characters go as backslash
    escapes instead."""
    data = yield
    return _utf8_safe(data) if hasattr(config, "workerinput") else data


def _utf8_safe(value: object) -> object:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {_utf8_safe(k): _utf8_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_utf8_safe(v) for v in value)
    return value


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first, each group in the order pytest-randomly gave it: under
    pytest-xdist the long tests start early, so the run does not end waiting for one of them."""
    _xdist_groups_in_node_ids(items)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _xdist_groups_in_node_ids(items: list[pytest.Item]) -> None:
    """Make ``@pytest.mark.xdist_group`` work again under pytest 9.2 (pytest-xdist#1386).

    With ``--dist loadgroup`` each worker appends ``@group`` to a grouped test's id (its
    ``_nodeid`` attribute) and the controller hands out every test sharing a group as one unit.
    pytest 9.2 keeps a node's id in a structured ``_id`` that ``nodeid`` reads, so the suffix
    never reached the controller: the groups were silently spread over every worker (the wheel
    built once per worker, each service module's service started once per worker and engine).
    Here the id takes the suffix too (after pytest-xdist's own hook: this one runs last); with a
    pytest or pytest-xdist where the suffix arrives already, this changes nothing."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # an older pytest: ``nodeid`` is ``_nodeid`` itself
        return
    for item in items:
        grouped = item.__dict__.get("_nodeid")
        if isinstance(grouped, str) and grouped != item.nodeid and grouped.startswith(item.nodeid + "@"):
            item._id = NodeId.parse(grouped)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What exists once the suite is collected (modules, test items, fixtures' definitions)
    lives to the end: move it out of the cyclic collector's sight (``gc.freeze``), so that a
    collection (the GUI tests collect at every test's end) walks only what the tests made.
    A full collection took about 0.1 s per GUI test before."""
    gc.collect()
    gc.freeze()


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


@pytest.fixture(scope="session", autouse=True)
def _scratch_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user's cache folder (the demo's kept clips: postproject.executor.clipcache) in the
    session's scratch folder, for module-scoped fixtures too: a test run never writes to the
    developer's cache, and the demos of one worker share their clips."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg" / "cache"))
        yield


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


class SchemaLocations:
    """``production_location`` on PostgreSQL: ``location(name)`` is a URI naming a schema of
    the test's own; it remembers the names it gave, and the schema each production of the test
    was made in (``production_factory`` may make one in a reset schema of an earlier test:
    tests/postgresql_recycling.py), so a name always names the same production in a test."""

    def __init__(self, server: Any, prefix: str) -> None:
        self.server = server
        self.prefix = prefix
        self.schemas: dict[str, str] = {}  # a name -> the schema it names

    def __call__(self, name: str) -> str:
        slug = re.sub(r"[^a-z0-9_]+", "_", Path(name).stem.lower()).strip("_") or "p"
        schema = self.schemas.setdefault(name, f"{self.prefix}_{slug}"[:63])
        return self.of_schema(schema)

    def of_schema(self, schema: str) -> str:
        from tests.postgresql_fixtures import SHARED_DATABASE

        return str(self.server.uri(SHARED_DATABASE, production=schema))


@pytest.fixture
def production_location(
    engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], str]:
    """Where a production named ``name`` (a file name) lives on the engine under test: a path
    under ``tmp_path``, or a URI naming a schema of its own (:class:`SchemaLocations`). On
    PostgreSQL the password is in ``PGPASSWORD`` too, so a production's ``location`` (which
    never shows it) opens it again."""
    if engine_kind == "sqlite":
        return lambda name: str(tmp_path / name)
    server = request.getfixturevalue("postgres_server")
    monkeypatch.setenv("PGPASSWORD", server.password)
    return SchemaLocations(server, f"t{next(_schemas)}")


@pytest.fixture(scope="session")
def production_template_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The empty SQLite production that ``production_factory`` copies (one per session/worker)."""
    return production_template.make_template(tmp_path_factory.mktemp("template"))


@pytest.fixture
def production_factory(
    production_location: Callable[[str], str],
    clock: FakeClock,
    production_template_file: Path,
    request: pytest.FixtureRequest,
) -> Iterator[Callable[..., Production]]:
    """``make(name, **options)``: a new, empty production, as ``Production.create(location,
    clock=clock, **options)`` makes it (on SQLite a copy of the session's template; on
    PostgreSQL, when it can, a reset schema of an earlier test: tests/postgresql_recycling.py)."""
    opened: list[Production] = []
    plain: list[str] = []  # PostgreSQL schemas made as Production.create(location, clock=...) makes them
    schema_of: dict[int, str] = {}  # id(production) -> its schema, for those in ``plain``

    def make(name: str = "production.pproj", **kwargs: object) -> Production:
        kwargs.setdefault("clock", clock)
        if isinstance(production_location, SchemaLocations) and _plain(kwargs):
            recycler = request.getfixturevalue("schema_recycler")
            production = _from_schema(production_location, recycler, name, kwargs["clock"], plain)  # type: ignore[arg-type]
            schema_of[id(production)] = production_location.schemas[name]
        else:
            location = production_location(name)
            if production_template.can_copy(location, kwargs):
                clock_option = kwargs.pop("clock")
                assert isinstance(clock_option, FakeClock)
                production = production_template.copy_of(
                    production_template_file, location, clock_option, **kwargs
                )
            else:
                production = Production.create(location, **{"allow_injected_clock": True, **kwargs})  # type: ignore[arg-type]
        opened.append(production)
        return production

    def recycle(production: Production) -> None:
        """Close ``production`` now, and on PostgreSQL give its schema back now rather than at
        the test's end, so that the test's next ``make`` can take it reset (a test that makes
        many productions one after another: the stateful lifecycle makes one per Hypothesis
        example). Its name must not be made again in this test."""
        production.close()
        opened.remove(production)
        schema = schema_of.pop(id(production), None)
        if schema is not None and schema in plain:
            plain.remove(schema)
            request.getfixturevalue("schema_recycler").give_back(schema)

    make.recycle = recycle  # type: ignore[attr-defined]
    yield make
    for production in opened:
        production.close()
    if plain:
        recycler = request.getfixturevalue("schema_recycler")
        for schema in plain:
            recycler.give_back(schema)


def _plain(options: dict[str, object]) -> bool:
    return set(options) == {"clock"} and isinstance(options["clock"], FakeClock)


def _from_schema(
    locations: SchemaLocations, recycler: SchemaRecycler, name: str, clock: FakeClock, plain: list[str]
) -> Production:
    """A PostgreSQL production for ``make(name)``: in a reset schema when one is spare and the
    test has not asked for ``name``'s location yet, else created in ``name``'s own schema."""
    taken = recycler.take(locations.of_schema, clock) if name not in locations.schemas else None
    if taken is not None:
        schema, production = taken
        locations.schemas[name] = schema
        plain.append(schema)
        return production
    location = locations(name)
    production = Production.create(location, clock=clock, allow_injected_clock=True)
    plain.append(locations.schemas[name])
    return production


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
