"""Typed references to the objects metadata can target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import ActivityId, AssetId, JobId, RepresentationId, _Id


@dataclass(frozen=True, slots=True)
class AssetRef:
    """Metadata target: an asset."""

    id: AssetId
    kind: ClassVar[str] = "asset"
    code: ClassVar[int] = 1

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True, slots=True)
class RepresentationRef:
    """Metadata target: a representation."""

    id: RepresentationId
    kind: ClassVar[str] = "representation"
    code: ClassVar[int] = 2

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True, slots=True)
class ActivityRef:
    """Metadata target: an activity."""

    id: ActivityId
    kind: ClassVar[str] = "activity"
    code: ClassVar[int] = 3

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True, slots=True)
class JobRef:
    """Metadata target: a job."""

    id: JobId
    kind: ClassVar[str] = "job"
    code: ClassVar[int] = 5

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"


ObjectRef = AssetRef | RepresentationRef | ActivityRef | JobRef

_REF_TYPES: dict[str, tuple[type[ObjectRef], type[_Id]]] = {
    "asset": (AssetRef, AssetId),
    "representation": (RepresentationRef, RepresentationId),
    "activity": (ActivityRef, ActivityId),
    "job": (JobRef, JobId),
}
REF_KINDS = tuple(_REF_TYPES)


def make_ref(kind: str, id_text: str) -> ObjectRef:
    """Build a reference from a kind name and canonical id text."""
    try:
        ref_type, id_type = _REF_TYPES[kind]
    except KeyError:
        raise InvalidArgumentError(
            f"reference kind must be one of {', '.join(REF_KINDS)}; got {kind[:40]!r}"
        ) from None
    return ref_type(id_type.parse(id_text))  # type: ignore[arg-type]


def parse_ref(text: str) -> ObjectRef:
    """Parse ``kind:uuid`` such as ``job:0b6f…``."""
    kind, colon, rest = text.partition(":")
    if not colon:
        raise InvalidArgumentError(
            f"target must look like KIND:ID with KIND one of {', '.join(REF_KINDS)}; got {text[:80]!r}"
        )
    return make_ref(kind, rest)


def check_ref(value: object) -> ObjectRef:
    """Reject anything that is not an object reference with a well-typed id."""
    for ref_type, id_type in _REF_TYPES.values():
        if type(value) is ref_type:
            if type(value.id) is not id_type:
                raise InvalidArgumentError(f"{ref_type.__name__} needs a {id_type.__name__}")
            return value
    raise InvalidArgumentError(
        f"metadata target must be an AssetRef, RepresentationRef, ActivityRef or JobRef; "
        f"got {type(value).__name__}"
    )
