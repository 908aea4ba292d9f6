"""Schema versions, the same on both engines: one baseline, numbered migrations after it.

Each adapter keeps its migrations in its own ``migrations`` package as ``NNNN_name.sql``. The
first is the baseline, ``0007_baseline.sql`` (schema version :data:`BASELINE`): the whole
schema as it is, which a new production gets before every later migration (``0008_...`` and
up, in order). Development builds before the baseline made productions at versions 1 to 6,
through six migrations folded into it; those cannot be upgraded and are refused, as is a
version 0 (a schema whose creation never finished) and a version newer than this release.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from postproject.model.errors import MigrationError, Reason, StorageError, UnsupportedError

BASELINE = 7  # the first version of the released schema (0001-0006 were development builds')


@dataclass(frozen=True, slots=True)
class Migrations:
    """One engine's migrations, the baseline first: ``(version, file name, script)`` each."""

    files: tuple[tuple[int, str, bytes], ...]

    @property
    def latest(self) -> int:
        """The schema version this release writes."""
        return self.files[-1][0]

    def after(self, version: int) -> list[tuple[int, bytes]]:
        """``(version, script)`` of the migrations a production at ``version`` (0: empty) still
        needs, in order."""
        assert version == 0 or version >= BASELINE, "a pre-baseline schema is refused, never migrated"
        return [(number, script) for number, _, script in self.files if number > version]

    def adding(self, name: str, script: str) -> Migrations:
        """These migrations and one more after them (a test's synthetic next migration)."""
        return checked([(n, s) for _, n, s in self.files] + [(name, script.encode("utf-8"))])


def numbered(package: str) -> Migrations:
    """The migration files (``*.sql``) of ``package``, checked (:func:`checked`)."""
    files = resources.files(package)
    return checked(
        [(entry.name, entry.read_bytes()) for entry in files.iterdir() if entry.name.endswith(".sql")]
    )


def checked(scripts: list[tuple[str, bytes]]) -> Migrations:
    """Migrations from ``(file name, script)`` pairs: the baseline first, then consecutive numbers."""
    ordered = sorted(scripts)
    baseline = f"{BASELINE:04d}_baseline.sql"
    if not ordered or ordered[0][0] != baseline:
        raise MigrationError(f"the first migration must be {baseline}; found {[n for n, _ in ordered]}")
    for expected, (name, _) in enumerate(ordered, start=BASELINE):
        if not name.startswith(f"{expected:04d}_"):
            raise MigrationError(f"migration files are not numbered consecutively: {name}")
    return Migrations(tuple((int(name[:4]), name, script) for name, script in ordered))


def check(production: str, version: int, latest: int, *, read_only: bool) -> None:
    """Refuse a production this release cannot open at ``version`` (``production`` names it in
    messages): before anything is written to it.

    Raises:
        StorageError: (storage, reason ``not_a_production``) version 0: its schema was never made.
        MigrationError: (migration) a version before the baseline: a development build made it.
        UnsupportedError: (unsupported) a version newer than ``latest``, or an older one that
            needs a migration while ``read_only``.
    """
    if version == 0:
        raise StorageError(
            f"{production} holds no production: its schema was never created (schema version 0)",
            reason=Reason.NOT_A_PRODUCTION,
        )
    if version < BASELINE:
        raise MigrationError(
            f"production {production} was made by a development build before the baseline schema "
            f"(its schema version is {version}; this release opens version {BASELINE} and later) and "
            "cannot be upgraded: keep using the build that made it, or create a new production with "
            "this release and request its jobs again"
        )
    if version > latest:
        raise UnsupportedError(
            f"production {production} has schema version {version}, newer than this release supports "
            f"({latest}); upgrade postproject-monitor"
        )
    if version < latest and read_only:
        raise UnsupportedError(
            f"production {production} has schema version {version} and must be upgraded; open it writable once"
        )
