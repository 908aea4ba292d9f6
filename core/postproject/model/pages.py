"""Bounded pages and opaque keyset cursors.

A cursor reads ``ppq2|<scope>|<family>|<bound parameters…>|<key>|<mac>``: the scope is the
production id, the parameters are the query's filters, the key is the last item's sort key
and the MAC (keyed BLAKE2b with the production's secret cursor key) rejects any alteration.
Reusing a cursor under other filters, on another production, or altered, is invalid_argument.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from postproject.model.errors import InvalidArgumentError

T = TypeVar("T")

MAX_LIMIT = 1000
CURSOR_VERSION = "ppq2"
MAX_CURSOR_CHARS = 2048


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a keyset query; ``next_cursor`` is None on the last page."""

    items: tuple[T, ...]
    next_cursor: str | None = None


def check_limit(limit: object, *, maximum: int = MAX_LIMIT) -> int:
    """A page limit is an int in 1..1000 (bool and other types are TypeError)."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int; got {type(limit).__name__}")
    if not 1 <= limit <= maximum:
        raise InvalidArgumentError(f"limit must be between 1 and {maximum}; got {limit}")
    return limit


class CursorCodec:
    """Encodes and checks cursors for one production."""

    def __init__(self, scope: str, key: bytes) -> None:
        self._scope = scope
        self._key = key

    def encode(self, family: str, params: Sequence[str], position: Sequence[str]) -> str:
        body = "|".join((CURSOR_VERSION, self._scope, family, *params, *position))
        return f"{body}|{self._mac(body)}"

    def decode(self, cursor: object, family: str, params: Sequence[str], width: int) -> tuple[str, ...]:
        """Return the position fields of a cursor made by this codec for this query."""
        if not isinstance(cursor, str):
            raise TypeError(f"cursor must be a str or None; got {type(cursor).__name__}")
        fields = cursor.split("|")
        mismatch = InvalidArgumentError("query cursor does not match this query and its parameters")
        if len(cursor) > MAX_CURSOR_CHARS or len(fields) < 2 or fields[1] != self._scope:
            raise mismatch
        expected = 3 + len(params) + width + 1
        if len(fields) != expected or fields[0] != CURSOR_VERSION or fields[2] != family:
            raise mismatch
        body, mac = cursor.rsplit("|", 1)
        if not hmac.compare_digest(mac, self._mac(body)):
            raise mismatch
        if tuple(fields[3 : 3 + len(params)]) != tuple(params):
            raise mismatch
        return tuple(fields[3 + len(params) : -1])

    def _mac(self, body: str) -> str:
        return hashlib.blake2b(body.encode(), key=self._key, digest_size=12).hexdigest()
