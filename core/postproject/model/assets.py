"""Assets, representations, fingerprints and media roots."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import AssetId, RepresentationId


class RepresentationKind(enum.Enum):
    """What a representation is for."""

    ORIGINAL = "original"
    PROXY = "proxy"
    OPTIMIZED = "optimized"
    DERIVED = "derived"

    @property
    def code(self) -> int:
        return _KIND_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> RepresentationKind:
        return _KINDS_BY_CODE[code]

    @classmethod
    def parse(cls, text: object) -> RepresentationKind:
        """Parse a lowercase kind name such as ``proxy``."""
        for kind in cls:
            if kind.value == text:
                return kind
        raise InvalidArgumentError(
            f"representation kind must be one of {', '.join(k.value for k in cls)}; got {str(text)[:40]!r}"
        )


_KIND_CODES = {
    RepresentationKind.ORIGINAL: 0,
    RepresentationKind.PROXY: 1,
    RepresentationKind.OPTIMIZED: 2,
    RepresentationKind.DERIVED: 3,
}
_KINDS_BY_CODE = {code: kind for kind, code in _KIND_CODES.items()}


class Availability(enum.Enum):
    """Whether a representation's file can be read here, now."""

    ONLINE = "online"
    OFFLINE = "offline"


@dataclass(frozen=True, slots=True, order=True)
class Fingerprint:
    """A content digest: algorithm, algorithm version and value."""

    algorithm: str
    version: int
    value: bytes

    @property
    def hex(self) -> str:
        return self.value.hex()

    def __str__(self) -> str:
        return f"{self.algorithm}/{self.version}:{self.value.hex()}"


@dataclass(frozen=True, slots=True)
class Asset:
    """The logical identity of production media; never a path."""

    id: AssetId
    name: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Representation:
    """One file realising an asset.

    ``path`` is relative to the media root ``root`` when a root is named, else absolute.
    ``superseded_by`` is the representation that replaced it: the output of a job that
    regenerated it (None while it has not been replaced).
    """

    id: RepresentationId
    asset_id: AssetId
    kind: RepresentationKind
    path: PurePath
    root: str | None
    size: int
    modified_at: datetime
    fingerprints: tuple[Fingerprint, ...]
    created_at: datetime
    superseded_by: RepresentationId | None = None


@dataclass(frozen=True, slots=True)
class MediaRoot:
    """A named place media lives; machines map it to a local directory."""

    name: str
    path: PurePath | None
