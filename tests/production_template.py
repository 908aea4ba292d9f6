"""Empty SQLite productions from a prepared template: a copy costs a few milliseconds, where
``Production.create`` (building the schema through every migration) costs tens.

The template is made once per test session (per pytest-xdist worker) by the real
``Production.create``, so it always has the schema the code under test builds. A copy is then
made what ``Production.create`` would have made: the ``production`` row (the only row a new
production has that differs from one production to the next) gets a new id, a new cursor key and
the creation time from the caller's clock, through real SQLite on the copied file, before anyone
opens it. Distinct ids matter: a lease or a lease token from another production must be
refused, and cursors of another production must not decode here. Nothing else in an empty
production depends on its id or its time (no revision, no job, ``job_clock`` empty).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from postproject import FakeClock, Production, ProductionId
from postproject.model.clock import to_micros

TEMPLATE_NAME = "template.pproj"


def make_template(folder: Path) -> Path:
    """Create the empty template production in ``folder`` (the real ``Production.create``)."""
    path = folder / TEMPLATE_NAME
    Production.create(path, clock=FakeClock(0), allow_injected_clock=True).close()
    return path


def copy_of(template: Path, path: str | os.PathLike[str], clock: FakeClock, **options: object) -> Production:
    """A new, empty production at ``path``, as ``Production.create(path, clock=clock, **options, allow_injected_clock=True)``
    would make it, copied from ``template`` and opened for writing.

    ``options`` are those ``Production.create`` and ``Production.open`` share (``root_map``,
    ``busy_timeout``). The file is copied under a temporary name and linked into place, so, as
    with ``create``, nobody sees a half-made production, and an existing file is never replaced
    (``os.link`` refuses). Where ``create`` would refuse (a file already there, no such
    folder), ``create`` itself is called, so the error is its own.
    """
    target = Path(path)
    if os.path.lexists(target) or not target.parent.is_dir():
        return Production.create(target, clock=clock, **options, allow_injected_clock=True)  # type: ignore[arg-type]  # its errors
    building = target.with_name(f".{target.name}.template")
    shutil.copyfile(template, building)
    conn = sqlite3.connect(building, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = OFF")  # a scratch file: no fsync before it has a name
        conn.execute(
            "UPDATE production SET id = ?, cursor_key = ?, created_at = ?",
            (ProductionId.new().bytes, os.urandom(32), to_micros(clock.now())),
        )
    finally:
        conn.close()  # the last connection: its WAL is checkpointed into the file and removed
    try:
        os.link(building, target)
    except FileExistsError:  # appeared meanwhile
        return Production.create(target, clock=clock, **options, allow_injected_clock=True)  # type: ignore[arg-type]
    finally:
        building.unlink()
    return Production.open(target, clock=clock, **options, allow_injected_clock=True)  # type: ignore[arg-type]


def can_copy(location: str, options: Mapping[str, object]) -> bool:
    """Whether a template copy stands for ``Production.create(location, **options)``: a file
    path (not a PostgreSQL URI), on the fake clock, with options ``open`` takes too."""
    return (
        not location.startswith(("postgresql://", "postgres://"))
        and isinstance(options.get("clock"), FakeClock)
        and set(options) <= {"clock", "root_map", "busy_timeout"}
    )
