"""Artifact rows: what the Artifacts view and the regeneration preview show (no Qt).

An :class:`ArtifactRow` is a plain, immutable value: a representation, its asset's name,
whether its file is online here and what is known about it. The ``read_*`` functions build
rows from a :class:`~postproject.Production`; they read the database and stat files, so
the service runs them on a reader thread (never the GUI thread), like ``services/reads.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from postproject import (
    ArtifactKnowledge,
    ArtifactState,
    AssetId,
    Availability,
    NotFoundError,
    Production,
    Representation,
    RepresentationId,
)
from postproject_gui.look.artifact_states import Labeller, needs_attention


@dataclass(frozen=True, slots=True)
class ArtifactRow:
    """One representation as a row; ``availability`` None when files were not checked,
    ``knowledge`` None when it was not evaluated (yet)."""

    representation: Representation
    asset_name: str | None
    availability: Availability | None
    knowledge: ArtifactKnowledge | None
    changed_on_disk: bool = False  # the file here no longer has the size or time recorded

    @property
    def id(self) -> RepresentationId:
        return self.representation.id

    @property
    def asset_id(self) -> AssetId:
        return self.representation.asset_id

    @property
    def state(self) -> ArtifactState | None:
        return self.knowledge.state if self.knowledge is not None else None

    @property
    def file_name(self) -> str:
        return self.representation.path.name

    @property
    def display_path(self) -> str:
        """``root:relative/path`` for a path under a media root, else the absolute path."""
        rep = self.representation
        return f"{rep.root}:{rep.path.as_posix()}" if rep.root else rep.path.as_posix()

    @property
    def label(self) -> str:
        """``A001_C002 · proxy`` (the short id when the asset has no name)."""
        name = self.asset_name or "…" + str(self.asset_id)[-8:]
        return f"{name} · {self.representation.kind.value}"

    @property
    def needs_attention(self) -> bool:
        """Stale or diverged."""
        return needs_attention(self.state)


def labeller(rows: Mapping[RepresentationId, ArtifactRow]) -> Labeller:
    """A function naming the representations in ``rows`` (for reason texts)."""

    def label(rep_id: RepresentationId) -> str | None:
        row = rows.get(rep_id)
        return f"{row.label} ({row.file_name})" if row is not None else None

    return label


def stale_count(rows: Iterable[ArtifactRow]) -> int:
    """How many rows are stale or diverged."""
    return sum(1 for row in rows if row.needs_attention)


# --- reads (service reader thread only) ----------------------------------------------


def read_row(
    production: Production,
    rep_id: RepresentationId,
    *,
    check_files: bool = True,
    asset_names: dict[AssetId, str | None] | None = None,
) -> ArtifactRow | None:
    """The current row of one representation (None when it does not exist)."""
    try:
        rep = production.representation(rep_id)
    except NotFoundError:
        return None
    return _row(production, rep, check_files, asset_names if asset_names is not None else {})


def read_rows(
    production: Production, rep_ids: Iterable[RepresentationId], *, check_files: bool = True
) -> dict[RepresentationId, ArtifactRow | None]:
    """Rows of these representations (None for one that does not exist), for ``apply_changes``."""
    names: dict[AssetId, str | None] = {}
    return {
        rep_id: read_row(production, rep_id, check_files=check_files, asset_names=names)
        for rep_id in dict.fromkeys(rep_ids)
    }


def read_page(
    production: Production, limit: int = 200, cursor: str | None = None, *, check_files: bool = True
) -> tuple[tuple[ArtifactRow, ...], str | None]:
    """One page of rows in representation id (creation) order, and the next cursor."""
    page = production.representations(limit=limit, cursor=cursor)
    names: dict[AssetId, str | None] = {}
    return tuple(_row(production, rep, check_files, names) for rep in page.items), page.next_cursor


def _row(
    production: Production, rep: Representation, check_files: bool, names: dict[AssetId, str | None]
) -> ArtifactRow:
    if rep.asset_id not in names:
        try:
            names[rep.asset_id] = production.asset(rep.asset_id).name
        except NotFoundError:
            names[rep.asset_id] = None
    availability = production.availability(rep.id) if check_files else None
    knowledge = production.evaluate_artifact(rep.id)
    changed = check_files and availability is Availability.ONLINE and not matches_record(production, rep)
    return ArtifactRow(rep, names[rep.asset_id], availability, knowledge, changed)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def matches_record(production: Production, rep: Representation) -> bool:
    """Whether the file here still has the size and modification time recorded when its
    fingerprint was (a ``stat``, not a hash: "Re-read file" hashes it and records a change).
    A re-delivered original shows up here before anyone records it."""
    path = production.resolve(rep)
    try:
        info = path.stat() if path is not None else None
    except OSError:
        return True  # not readable here: availability says so
    if info is None:
        return True
    recorded = (rep.modified_at - EPOCH) // timedelta(microseconds=1)
    return info.st_size == rep.size and info.st_mtime_ns // 1000 == recorded
