"""Moving a whole production between engines: ``copy`` and ``verify``.

A team that outgrows one workstation keeps its history: :func:`copy` moves every fact of a
production (ids, revisions and events, snapshots, metadata, jobs, attempts, workers and live
claims) from a ``*.pproj`` to a PostgreSQL production or back, into a destination that is
new or empty, in one transaction; :func:`verify` proves two productions hold the same facts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from postproject import locations
from postproject.engine import Engine, TableDump
from postproject.model import clock as clocks
from postproject.model.errors import NotFoundError, UnsupportedError
from postproject.model.ids import ProductionId

Location = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What :func:`copy` moved: rows per table."""

    production_id: ProductionId
    rows: dict[str, int]


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Whether two productions hold the same facts; the first differences when not."""

    equal: bool
    rows: dict[str, tuple[int, int]]  # table -> (rows in a, rows in b)
    differences: list[str] = field(default_factory=list)


def copy(source: Location, destination: Location) -> CopyReport:
    """Copy the production at ``source`` into ``destination`` (created when absent).

    Raises:
        NotFoundError: (not_found) nothing at ``source``.
        ConflictError: (conflict, reason ``not_empty``) the destination holds facts already.
        UnsupportedError: (unsupported) the two schemas are of different versions.
    """
    origin = locations.open_engine(source, read_only=True)
    try:
        created = False
        try:
            target = locations.open_engine(destination, read_only=False)
        except NotFoundError:
            target = locations.create_engine(
                destination, b"\0" * 16, clocks.to_micros(clocks.SystemClock().now())
            )
            created = True
        try:
            if target.schema_version() != origin.schema_version():
                raise UnsupportedError(
                    f"{target.location} has schema version {target.schema_version()} and {origin.location} "
                    f"{origin.schema_version()}; open both with this release first (it upgrades them)"
                )
            rows: dict[str, int] = {}
            target.import_tables(_counted(origin.export_tables(), rows))
            production_id = ProductionId(target.reads.production_row()[0])
        except BaseException:
            target.close()
            if created:
                locations.remove(destination)
            raise
        target.close()
    finally:
        origin.close()
    return CopyReport(production_id, rows)


def verify(a: Location, b: Location) -> VerifyReport:
    """Compare every table of two productions (read-only)."""
    first = locations.open_engine(a, read_only=True)
    try:  # (the first is closed when the second cannot be opened, too)
        second = locations.open_engine(b, read_only=True)
        try:
            left = {t.name: t for t in _materialised(first)}
            right = {t.name: t for t in _materialised(second)}
        finally:
            second.close()
    finally:
        first.close()
    rows: dict[str, tuple[int, int]] = {}
    differences: list[str] = []
    for name in sorted(left.keys() | right.keys()):
        one, two = left.get(name), right.get(name)
        if one is None or two is None:
            differences.append(f"table {name} exists in only one of them")
            continue
        ours, theirs = set(map(tuple, one.rows)), set(map(tuple, two.rows))
        rows[name] = (len(ours), len(theirs))
        if one.columns != two.columns:
            differences.append(f"table {name}: columns differ")
        elif ours != theirs:
            only_a, only_b = len(ours - theirs), len(theirs - ours)
            differences.append(f"table {name}: {only_a} rows only in the first, {only_b} only in the second")
    return VerifyReport(not differences, rows, differences[:20])


def _counted(dumps: Iterator[TableDump], rows: dict[str, int]) -> Iterator[TableDump]:
    for dump in dumps:
        materialised = [tuple(r) for r in dump.rows]
        rows[dump.name] = len(materialised)
        yield TableDump(dump.name, dump.columns, materialised)


def _materialised(engine: Engine) -> Iterator[TableDump]:
    for dump in engine.export_tables(derived=True):
        rows = [_neutral(r) for r in dump.rows]
        if (
            dump.name in ("job_counts", "worker_outcomes") and "count" in dump.columns
        ):  # a zero count is no row
            at = dump.columns.index("count")
            rows = [r for r in rows if r[at] != 0]
        yield TableDump(dump.name, dump.columns, rows)


def _neutral(row: tuple[object, ...]) -> tuple[object, ...]:
    """Values compared the same way whichever engine read them (bytes, not memoryview)."""
    return tuple(bytes(v) if isinstance(v, (memoryview, bytearray)) else v for v in row)
