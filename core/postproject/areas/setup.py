"""The setup area: assets, media roots and representations (the files a production knows).

``Transaction`` builds one :class:`SetupOperations` per edit, given the edit's state, and
delegates ``create_asset``, ``add_media_root``, ``add_representation`` and
``observe_representation`` to it; ``Production`` builds one :class:`SetupReads`, given its
handle, and delegates the asset, representation, media-root and availability reads to it.
Their public docstrings are on :class:`postproject.transaction.Transaction` and
:class:`postproject.production.Production`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from postproject.base import files
from postproject.base.edit import EditState, event
from postproject.base.handle import ProductionHandle
from postproject.model import names
from postproject.model.assets import Asset, Availability, MediaRoot, Representation, RepresentationKind
from postproject.model.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from postproject.model.ids import AssetId, MediaRootId, RepresentationId, check_id
from postproject.model.pages import Page, check_limit


class SetupOperations:
    """Creating assets, media roots and representations, and re-reading a representation's file."""

    def __init__(self, edit: EditState) -> None:
        self._edit = edit
        self._handle = edit.handle

    def create_asset(self, name: str | None) -> AssetId:
        """Create an asset."""
        if name is not None:
            names.bounded_text("asset name", name, 1024)
        asset_id = AssetId.new()
        with self._edit.operation(savepoint=False) as s:
            s.insert_asset(asset_id.bytes, name, self._handle.now_micros())
            event(s, "asset_imported", asset_id, asset_id=asset_id)
        return asset_id

    def add_media_root(self, name: str, path: str | os.PathLike[str] | None) -> None:
        """Configure a named media root."""
        names.root_name("media root name", name)
        stored = str(Path(path).expanduser().resolve()) if path is not None else None
        if stored is not None:  # shared with every host as text: the bytes must be UTF-8
            names.utf8_text("media root path", stored)
        with self._edit.operation(savepoint=False) as s:
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
        root: str | None,
    ) -> RepresentationId:
        """Add one file as a representation of an asset, with its size, mtime and fingerprint."""
        check_id("asset_id", asset_id, AssetId)
        if not isinstance(kind, RepresentationKind):
            raise InvalidArgumentError(f"representation kind must be a RepresentationKind; got {kind!r}")
        stored, absolute = self._handle.locate(path, root, self._root_path)
        facts = files.read_facts(absolute)  # hashed before taking the write lock when we can
        rep_id = RepresentationId.new()
        with self._edit.operation() as s:
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
            event(
                s,
                "representation_added",
                rep_id,
                asset_id=asset_id,
                representation_id=rep_id,
            )
        return rep_id

    def _root_path(self, name: str) -> Path | None:
        """A root's directory as this edit sees it (roots it added included)."""
        session = self._edit.session
        if session is None:
            return self._handle.root_path(name)
        mapped = self._handle.root_map.get(name)
        row = session.media_root_path(name)
        if row is None:
            raise NotFoundError(f"media root {name!r} does not exist")
        return mapped or (Path(row[0]) if row[0] is not None else None)

    def observe_representation(self, representation_id: RepresentationId) -> bool:
        """Re-read a representation's file; record a new fingerprint if its content changed."""
        check_id("representation_id", representation_id, RepresentationId)
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
        with self._edit.operation() as s:
            if not s.set_fingerprint(representation_id.bytes, facts.fingerprint):
                return False
            s.update_file_facts(representation_id.bytes, facts.size, facts.mtime)
            event(
                s,
                "representation_fingerprint_observed",
                representation_id,
                representation_id=representation_id,
                algorithm=facts.fingerprint.algorithm,
                version=facts.fingerprint.version,
            )
        return True


class SetupReads:
    """Assets, representations, media roots and whether a representation's file is here."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def asset(self, asset_id: AssetId) -> Asset:
        """One asset."""
        self._handle.check_open()
        check_id("asset_id", asset_id, AssetId)
        return self._handle.reads.asset(asset_id)

    def assets_by_id(self, asset_ids: Iterable[AssetId]) -> dict[AssetId, Asset]:
        """The assets among ``asset_ids`` that exist, by id (few statements for many ids)."""
        self._handle.check_open()
        wanted = _ids("asset_ids", asset_ids, AssetId)
        return {a.id: a for a in self._handle.reads.assets_by_id([i.bytes for i in wanted])}

    def representations_by_id(
        self, representation_ids: Iterable[RepresentationId]
    ) -> dict[RepresentationId, Representation]:
        """The representations among ``representation_ids`` that exist, by id."""
        self._handle.check_open()
        wanted = _ids("representation_ids", representation_ids, RepresentationId)
        return {r.id: r for r in self._handle.reads.representations_by_id([i.bytes for i in wanted])}

    def assets(self, limit: int, cursor: str | None) -> Page[Asset]:
        """Assets in id (creation) order."""
        self._handle.check_open()
        check_limit(limit)
        after = self._handle.after("assets", (), cursor)
        items = self._handle.reads.assets(after, limit + 1)
        return self._handle.page("assets", (), items, limit, lambda a: a.id.bytes)

    def representation(self, representation_id: RepresentationId) -> Representation:
        """One representation."""
        self._handle.check_open()
        check_id("representation_id", representation_id, RepresentationId)
        return self._handle.reads.representation(representation_id)

    def representations(
        self,
        asset_id: AssetId | None,
        kind: RepresentationKind | None,
        limit: int,
        cursor: str | None,
    ) -> Page[Representation]:
        """Representations (optionally of one asset and/or kind) in id order."""
        self._handle.check_open()
        check_limit(limit)
        if asset_id is not None:
            check_id("asset_id", asset_id, AssetId)
        if kind is not None and not isinstance(kind, RepresentationKind):
            raise InvalidArgumentError(f"kind must be a RepresentationKind; got {kind!r}")
        params = (str(asset_id) if asset_id else "*", kind.value if kind else "*")
        after = self._handle.after("representations", params, cursor)
        items = self._handle.reads.representations(asset_id, kind.code if kind else None, after, limit + 1)
        return self._handle.page("representations", params, items, limit, lambda r: r.id.bytes)

    def media_roots(self) -> tuple[MediaRoot, ...]:
        """Every media root."""
        self._handle.check_open()
        return tuple(self._handle.reads.media_roots())

    def availability(self, representation_id: RepresentationId) -> Availability:
        """Online when the representation's file exists here as a regular file."""
        path = self._handle.resolve(self.representation(representation_id))
        return Availability.ONLINE if path is not None and path.is_file() else Availability.OFFLINE


def _ids(name: str, ids: Iterable[Any], kind: type[Any]) -> list[Any]:
    """``ids`` as a list, each checked to be a ``kind`` (a string is refused: it is no list of ids)."""
    if isinstance(ids, str | bytes):
        raise InvalidArgumentError(f"{name} must be a collection of ids, not a single string")
    wanted = list(ids)
    for item in wanted:
        check_id(name, item, kind)
    return wanted
