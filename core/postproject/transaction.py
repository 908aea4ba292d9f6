"""Transactions: the only way to change a production.

``with production.edit() as tx: ...; tx.commit()``. Leaving the block without ``commit()``
rolls back, and so does dropping the edit (garbage collection) or closing its production:
the write lock is released and the edit's pending leases end. Each method is atomic on its
own: a failed call leaves the transaction as it was and still usable, except a failed
completion, which poisons the edit (notes §2.6): every later call and ``commit()`` raise
the same error until ``rollback()``, so nothing staged for it can be published. A failed
commit ends the edit and publishes nothing. The write lock is taken at the first operation
and held until commit or rollback. Job operations live in :mod:`postproject.areas.jobs`,
the farm layer in :mod:`postproject.areas.farm`, regeneration in
:mod:`postproject.areas.regeneration`, and progress, stop confirmations and attempt
logs in :mod:`postproject.areas.progress`.
"""

from __future__ import annotations

import json
import logging
import os
import weakref
from pathlib import Path

from postproject.areas.progress import ProgressOperations
from postproject.areas.regeneration import RegenerationOperations
from postproject.base import files, leases
from postproject.base.edit import EditState
from postproject.base.handle import ProductionHandle
from postproject.model import names
from postproject.model import values as metadata_values
from postproject.model.activities import ActivitySpec
from postproject.model.assets import RepresentationKind
from postproject.model.clock import from_micros, to_micros
from postproject.model.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    Reason,
)
from postproject.model.ids import (
    ActivityId,
    AssetId,
    MediaRootId,
    RepresentationId,
    RevisionId,
)
from postproject.model.metadata import Property
from postproject.model.refs import ObjectRef, check_ref
from postproject.model.revisions import CommitReceipt, Revision

log = logging.getLogger(__name__)


class Transaction(RegenerationOperations, ProgressOperations):
    """An edit of one production (see the module docstring)."""

    def __init__(
        self,
        production: object,
        handle: ProductionHandle,
        *,
        origin: str | None,
        message: str | None,
    ) -> None:
        self._production = production
        self._handle = handle
        self._origin = origin
        self._message = message
        self._edit = EditState(handle)
        self._finalizer = weakref.finalize(self, self._edit.abandon)

    # --- plumbing ----------------------------------------------------------------------

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._edit.status == "open":
            self.rollback()

    @property
    def production(self) -> object:
        """The ``Production`` this edit changes."""
        return self._production

    @property
    def open(self) -> bool:
        return self._edit.status == "open"

    # --- setup -------------------------------------------------------------------------

    def create_asset(self, name: str | None = None) -> AssetId:
        """Create an asset (the logical identity of media; never a path)."""
        if name is not None:
            names.bounded_text("asset name", name, 1024)
        asset_id = AssetId.new()
        with self._op(savepoint=False) as s:
            s.insert_asset(asset_id.bytes, name, self._handle.now_micros())
            self._event(s, "asset_imported", asset_id, asset_id=asset_id)
        return asset_id

    def add_media_root(self, name: str, path: str | os.PathLike[str] | None = None) -> None:
        """Configure a named media root, optionally with this machine's directory for it."""
        names.root_name("media root name", name)
        stored = str(Path(path).expanduser().resolve()) if path is not None else None
        with self._op(savepoint=False) as s:
            if s.media_root_path(name) is not None:
                raise AlreadyExistsError(f"media root {name!r} already exists")
            root_id = MediaRootId.new()
            s.insert_media_root(root_id.bytes, name, stored)
            s.event("media_root_added", None, {"media_root_id": str(root_id), "name": name})

    def add_representation(
        self,
        asset_id: AssetId,
        kind: RepresentationKind,
        path: str | os.PathLike[str],
        *,
        root: str | None = None,
    ) -> RepresentationId:
        """Add one file as a representation of an asset; records size, mtime and a fingerprint.

        With ``root``, ``path`` is relative to that media root (or absolute inside it) and is
        stored relative to it.

        Raises:
            NotFoundError: (not_found) the asset or the root does not exist.
            IoError: (io) the file cannot be read.
            InvalidArgumentError: (invalid_argument) bad kind, path outside its root, not a file.
        """
        _typed("asset_id", asset_id, AssetId)
        if not isinstance(kind, RepresentationKind):
            raise InvalidArgumentError(f"representation kind must be a RepresentationKind; got {kind!r}")
        stored, absolute = self._handle.locate(path, root, self._root_path)
        facts = files.read_facts(absolute)  # hashed before taking the write lock when we can
        rep_id = RepresentationId.new()
        with self._op() as s:
            if not s.insert_representation(
                rep_id.bytes,
                asset_id.bytes,
                kind.code,
                stored,
                root,
                facts.size,
                facts.mtime,
                self._handle.now_micros(),
                facts.fingerprint,
            ):
                if s.missing("assets", [asset_id.bytes]):
                    raise NotFoundError(f"asset {asset_id} does not exist")
                raise NotFoundError(f"media root {root!r} does not exist")
            self._event(
                s,
                "representation_added",
                rep_id,
                asset_id=asset_id,
                representation_id=rep_id,
            )
        return rep_id

    def _root_path(self, name: str) -> Path | None:
        """A root's directory as this transaction sees it (roots it added included)."""
        session = self._edit.session
        if session is None:
            return self._handle.root_path(name)
        mapped = self._handle.root_map.get(name)
        row = session.media_root_path(name)
        if row is None:
            raise NotFoundError(f"media root {name!r} does not exist")
        return mapped or (Path(row[0]) if row[0] is not None else None)

    def observe_representation(self, representation_id: RepresentationId) -> bool:
        """Re-read a representation's file; record a new fingerprint if its content changed.

        Returns:
            True when a change was recorded (with a ``representation_fingerprint_observed`` event).
        """
        _typed("representation_id", representation_id, RepresentationId)
        session = self._edit.session
        located = session.location(representation_id.bytes) if session is not None else None
        if located is None:  # not staged here: the committed representation
            self._handle.check_open()
            rep = self._handle.reads.representation(representation_id)
            located = (rep.path.as_posix() if rep.root else str(rep.path), rep.root)
        path, root = located
        base = self._root_path(root) if root is not None else None
        if root is not None and base is None:
            raise InvalidArgumentError(
                f"representation {representation_id} lives under media root {root!r}, which has no "
                "directory on this machine (configure it or pass root_map)"
            )
        facts = files.read_facts(base / path if base is not None else Path(path))
        with self._op() as s:
            if not s.set_fingerprint(representation_id.bytes, facts.fingerprint):
                return False
            s.update_file_facts(representation_id.bytes, facts.size, facts.mtime)
            self._event(
                s,
                "representation_fingerprint_observed",
                representation_id,
                representation_id=representation_id,
                algorithm=facts.fingerprint.algorithm,
                version=facts.fingerprint.version,
            )
        return True

    def create_activity(self, spec: ActivitySpec) -> ActivityId:
        """Record a completed activity; storage captures its edge snapshots at commit.

        Raises:
            NotFoundError: (not_found) a referenced representation does not exist.
            InvalidArgumentError: (invalid_argument) the activity would close a provenance cycle.
        """
        if not isinstance(spec, ActivitySpec):
            raise TypeError(f"spec must be an ActivitySpec; got {type(spec).__name__}")
        inputs = [e.representation_id.bytes for e in spec.input_edges]
        outputs = [e.representation_id.bytes for e in spec.output_edges]
        activity_id = ActivityId.new()
        with self._op() as s:
            if s.outputs_consumed(outputs) and s.creates_cycle(inputs, outputs):
                absent = s.missing("representations", sorted(set(inputs + outputs)))
                if absent:
                    raise NotFoundError(f"representation {RepresentationId(absent[0])} does not exist")
                raise InvalidArgumentError(
                    "the activity would create a provenance cycle (an output is upstream of an input)"
                )
            if not s.insert_activity(
                activity_id.bytes,
                spec,
                to_micros(spec.started_at) if spec.started_at else None,
                to_micros(spec.finished_at) if spec.finished_at else None,
            ):
                absent = s.missing("representations", sorted(set(inputs + outputs)))
                raise NotFoundError(f"representation {RepresentationId(absent[0])} does not exist")
            self._event(
                s,
                "activity_created",
                activity_id,
                activity_id=activity_id,
                activity_kind=spec.kind,
            )
        return activity_id

    def add_metadata(self, ref: ObjectRef, property: Property, value: object) -> None:
        """Append a typed value of ``property`` to the object ``ref`` names.

        Plain values convert where unambiguous (str, bool, int, Decimal, aware datetime,
        bytes, Fraction, lists and dicts of those); floats are invalid_argument.
        """
        check_ref(ref)
        if not isinstance(property, Property):
            raise InvalidArgumentError(f"property must be a Property; got {type(property).__name__}")
        typed = metadata_values.to_value(value)
        metadata_values.check_limits(typed)
        encoded = _json(metadata_values.to_json(typed))
        table = {
            "asset": "assets",
            "representation": "representations",
            "activity": "activities",
            "job": "jobs",
        }
        with self._op(savepoint=False) as s:
            if s.missing(table[ref.kind], [ref.id.bytes]):
                raise NotFoundError(f"{ref.kind} {ref.id} does not exist")
            s.insert_metadata(ref.code, ref.id.bytes, property.vocabulary, property.name, encoded)
            s.event(
                "metadata_added_or_replaced",
                ref.id.bytes,
                {
                    "target": {"kind": ref.kind, "id": str(ref.id)},
                    "vocabulary": property.vocabulary,
                    "property": property.name,
                },
            )

    # --- ending ------------------------------------------------------------------------

    def commit(self) -> CommitReceipt:
        """Publish everything staged as one revision (``revision`` None when nothing was staged).

        Raises:
            ConflictError: (conflict) a lease expired before the commit, or the clock moved
                backward; nothing is published and the transaction ends. A poisoned edit
                (a failed completion) raises that completion's error and stays open until
                ``rollback()``.
        """
        edit = self._edit
        edit.check_usable()
        session = edit.session
        if session is None:
            edit.status = "committed"
            return CommitReceipt(self._handle.production_id, None)
        try:
            committed_at = self._commit_time()
            revision_id = RevisionId.new()
            published = session.commit(
                committed_at,
                revision_id.bytes,
                self._origin,
                self._message,
                edit.observed_high,
            )
        except BaseException:
            edit.status = "failed"
            edit.end_pending()
            edit.session = None
            try:
                session.rollback(edit.observed_high)
            finally:
                self._handle.end_write()
            raise
        edit.status = "committed"
        edit.session = None
        self._handle.end_write()
        if not published:
            edit.end_pending()
            return CommitReceipt(self._handle.production_id, None)
        for lease, effect, expires in edit.effects:
            if effect == "end":
                leases.end(lease)
            else:
                leases.activate(lease, expires)
        revision = Revision(
            revision_id,
            session.sequence,
            from_micros(committed_at),
            self._origin,
            self._message,
            tuple(session.staged),
        )
        return CommitReceipt(self._handle.production_id, revision)

    def _commit_time(self) -> int:
        if not self._edit.guarded:
            return self._handle.now_micros()
        now = self._now_guarded()
        for expiry in self._edit.guards:
            if expiry <= now:
                raise ConflictError("job lease expired before commit", reason=Reason.LEASE_EXPIRED)
        return now

    def rollback(self) -> None:
        """Discard everything staged (the highest clock sample observed is still kept)."""
        self._edit.abandon()

    def __repr__(self) -> str:
        return f"Transaction({self._handle.location}, {self._edit.status})"


def _typed(field: str, value: object, kind: type) -> None:
    if type(value) is not kind:
        raise InvalidArgumentError(f"{field} must be a {kind.__name__}; got {type(value).__name__}")


def _json(data: object) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
