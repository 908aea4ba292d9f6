"""Identities: distinct UUID-based types, printed canonically and parsed strictly.

``JobId(x) != AssetId(x)``: each type only equals (and orders against) its own kind.
Order is the byte order of the 16-byte UUID, which equals the order of the canonical text.
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Self, TypeVar

from postproject.model import clock
from postproject.model.errors import InvalidArgumentError

_set = object.__setattr__  # uuid.UUID is immutable: its own __init__ sets its slots this way
_UNKNOWN = uuid.SafeUUID.unknown
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _Id(uuid.UUID):
    """Base of the identity types; never used directly."""

    __slots__ = ()
    label: ClassVar[str] = "id"

    def __init__(self, value: str | uuid.UUID | bytes) -> None:
        # The two common cases (ids read from storage, fresh ids) set the fields directly:
        # uuid.UUID.__init__'s general checks cost more than the whole rest of a small read.
        if type(value) is bytes:
            if len(value) != 16:
                raise InvalidArgumentError(f"{self.label} must be 16 bytes; got {len(value)}")
            _set(self, "int", int.from_bytes(value))
            _set(self, "is_safe", _UNKNOWN)
        elif isinstance(value, uuid.UUID):
            _set(self, "int", value.int)
            _set(self, "is_safe", _UNKNOWN)
        elif isinstance(value, bytes):
            if len(value) != 16:
                raise InvalidArgumentError(f"{self.label} must be 16 bytes; got {len(value)}")
            super().__init__(bytes=value)
        elif isinstance(value, str):
            if not _CANONICAL.fullmatch(value):
                raise InvalidArgumentError(
                    f"{self.label} must be a canonical lowercase UUID; got {value[:80]!r}"
                )
            super().__init__(hex=value)
        else:
            raise TypeError(f"{self.label} must be a str or UUID, got {type(value).__name__}")

    @classmethod
    def new(cls) -> Self:
        """A fresh identity: a UUIDv7, so id order follows creation order."""
        new = cls.__new__(cls)
        _set(new, "int", _uuid7_int())
        _set(new, "is_safe", _UNKNOWN)
        return new

    @classmethod
    def parse(cls, text: object) -> Self:
        """Parse canonical lowercase hyphenated text; anything else is invalid_argument."""
        if not isinstance(text, str):
            raise InvalidArgumentError(f"{cls.label} must be text; got {type(text).__name__}")
        return cls(text)

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return self.int == other.int
        return NotImplemented

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.int))

    def _same(self, other: Any) -> bool:
        return type(other) is type(self)

    def __lt__(self, other: Any) -> bool:
        if not self._same(other):
            return NotImplemented
        return bool(self.int < other.int)

    def __le__(self, other: Any) -> bool:
        if not self._same(other):
            return NotImplemented
        return bool(self.int <= other.int)

    def __gt__(self, other: Any) -> bool:
        if not self._same(other):
            return NotImplemented
        return bool(self.int > other.int)

    def __ge__(self, other: Any) -> bool:
        if not self._same(other):
            return NotImplemented
        return bool(self.int >= other.int)

    def __repr__(self) -> str:
        return f"{type(self).__name__}('{self}')"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self),))


_uuid7_lock = threading.Lock()
_uuid7_last = [0, 0]  # last millisecond, last 12-bit counter


def _uuid7_int() -> int:
    """The 128-bit value of an RFC 9562 UUIDv7 (method 1: a 12-bit counter keeps ids monotonic
    within a process)."""
    millis = clock.wall_millis()
    random = int.from_bytes(os.urandom(10))  # one read of the system CSPRNG: tail, then counter seed
    with _uuid7_lock:
        last_millis, counter = _uuid7_last
        if millis <= last_millis:
            millis, counter = last_millis, counter + 1
            if counter > 0xFFF:
                millis, counter = last_millis + 1, 0
        else:
            counter = (random >> 64) & 0x7FF
        _uuid7_last[:] = [millis, counter]
    tail = random & ((1 << 62) - 1)
    return (millis & ((1 << 48) - 1)) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | tail


class ProductionId(_Id):
    """Identity of a production."""

    __slots__ = ()
    label = "production id"


class AssetId(_Id):
    """Identity of an asset."""

    __slots__ = ()
    label = "asset id"


class RepresentationId(_Id):
    """Identity of a representation."""

    __slots__ = ()
    label = "representation id"


class ActivityId(_Id):
    """Identity of an activity."""

    __slots__ = ()
    label = "activity id"


class JobId(_Id):
    """Identity of a job."""

    __slots__ = ()
    label = "job id"


class RevisionId(_Id):
    """Identity of a revision."""

    __slots__ = ()
    label = "revision id"


class MediaRootId(_Id):
    """Identity of a media root."""

    __slots__ = ()
    label = "media root id"


def check_id(field: str, value: object, kind: type[_Id]) -> None:
    """Require an id argument of exactly the type ``kind`` (invalid_argument naming ``field``)."""
    if type(value) is not kind:
        raise InvalidArgumentError(f"{field} must be a {kind.__name__}; got {type(value).__name__}")


T = TypeVar("T")


def iter_chunks(ids: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``ids`` in slices of at most ``size`` (id lists sent to a database in bounded batches)."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
