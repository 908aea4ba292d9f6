"""The internal handle: what a production shares with its transactions and read models.

A :class:`ProductionHandle` carries the engine, the clock, the cursor codec, the root map
and the write lock of one open production. ``Production`` builds it and gives it to its
read areas and to each ``Transaction`` (whose areas reach it through the edit's state);
leases and the knowledge package work through it too (and through the engine interface), so
no module reaches into another object's private attributes. Code that receives a
``Production`` from a caller (lease import, PROV export) asks it for its handle with
:meth:`ProductionHandle.of`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from postproject.engine import Engine, Reads, WriteSession
from postproject.model import clock as clocks
from postproject.model import names, paths
from postproject.model.assets import Representation
from postproject.model.errors import (
    ConflictError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PostProjectError,
    Reason,
)
from postproject.model.ids import ProductionId
from postproject.model.pages import CursorCodec, Page

T = TypeVar("T")
FAR_AHEAD = 10 * 60 * 1_000_000  # micros: a mark this far ahead was raised by a wrong clock, not skew


class ProductionHandle:
    """Engine, clock, cursors, roots and the write lock of one open production."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: clocks.Clock,
        read_only: bool,
        root_map: Mapping[str, Path],
        busy_timeout: float,
    ) -> None:
        self.engine = engine
        self.reads: Reads = engine.reads
        self.clock = clock
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self.root_map = dict(root_map)
        raw_id, _, cursor_key = self.reads.production_row()
        self.production_id = ProductionId(raw_id)
        self.cursors = CursorCodec(str(self.production_id), cursor_key)
        self.closed = False
        self._stored_roots: dict[str, Path | None] = {}
        self._write_lock = threading.Lock()
        self._abandon: Callable[[], None] | None = None  # ends the open edit, if any

    @staticmethod
    def of(production: object) -> ProductionHandle:
        """The handle of a ``Production`` (TypeError for anything else).

        A ``Production`` offers it through ``__production_handle__``, a method the core
        calls and nobody else needs (it is not part of the public API).
        """
        offer = getattr(type(production), "__production_handle__", None)
        handle = offer(production) if callable(offer) else None
        if not isinstance(handle, ProductionHandle):
            raise TypeError(f"expected an open Production; got {type(production).__name__}")
        return handle

    @property
    def location(self) -> str:
        return self.engine.location

    # --- lifecycle ---------------------------------------------------------------------

    def check_open(self) -> None:
        if self.closed:
            raise ConflictError(f"production {self.location} is closed", reason=Reason.CLOSED)

    def close(self) -> None:
        if self.closed:
            return
        abandon = self._abandon
        if abandon is not None:
            abandon()  # an edit left open: roll it back so its lock and leases end now
        self.closed = True
        self.engine.close()

    # --- the write lock ----------------------------------------------------------------

    def begin_write(self, abandon: Callable[[], None]) -> WriteSession:
        """Take this handle's write lock and start an edit; ``abandon`` ends it on close."""
        self.check_open()
        if not self._write_lock.acquire(blocking=False):
            raise ConflictError(
                "another transaction is open on this production handle", reason=Reason.NESTED_EDIT
            )
        try:
            session = self.engine.begin_write(self.busy_timeout)
        except BaseException:
            self._write_lock.release()
            raise
        self._abandon = abandon
        return session

    def end_write(self) -> None:
        self._abandon = None
        self._write_lock.release()

    # --- time --------------------------------------------------------------------------

    def now_micros(self) -> int:
        """An unguarded timestamp (requests, creation times, commit times)."""
        return clocks.to_micros(sample(self.clock))

    def sample_clock(self, high_water: int | None) -> int:
        """A guarded sample: conflict when the clock is behind the durable high-water mark."""
        now = self.now_micros()
        if high_water is not None and now < high_water:
            raise ConflictError(
                f"job authority clock moved backward: {clocks.from_micros(now).isoformat()} is before "
                f"{clocks.from_micros(high_water).isoformat()}; "
                + (
                    self._raised_by(high_water)
                    if high_water - now > FAR_AHEAD
                    else "retry when time catches up"
                ),
                reason=Reason.CLOCK_REGRESSED,
            )
        return now

    def _raised_by(self, mark: int) -> str:
        """What raised a mark far ahead (the revision that first carried it: who and when), and
        the way out: a process whose clock ran ahead, not this one, is wrong."""
        try:
            source = self.reads.mark_source(mark)
        except PostProjectError:  # pragma: no cover - the message is still clear without it
            source = None
        if source is None:
            who = "a guarded edit that failed (no revision names it)"
        else:
            parts = [f"origin {source.origin!r}" if source.origin else "no origin"]
            parts += [
                f"{label} {value!r}"
                for label, value in (
                    ("principal", source.principal),
                    ("agent", source.agent),
                    ("worker", source.worker),
                )
                if value
            ]
            when = clocks.from_micros(source.committed_at).isoformat()
            who = f"revision {source.sequence} ({', '.join(parts)}), committed at {when} on its clock"
        return (
            f"the mark is far ahead of this clock: it was raised by {who}; fix that host's clock, then "
            "'postproject clock reset' lowers the mark"
        )

    def guarded_now(self) -> int:
        return self.sample_clock(self.reads.high_water())

    # --- paths -------------------------------------------------------------------------

    def root_path(self, name: str) -> Path | None:
        """This machine's directory for a media root (the root map wins over the stored path)."""
        if name in self.root_map:
            return self.root_map[name]
        if name not in self._stored_roots:  # a root, once added, never changes: read it once
            root = self.reads.media_root(name)
            if root is None:
                raise NotFoundError(f"media root {name!r} does not exist")
            self._stored_roots[name] = Path(root.path) if root.path is not None else None
        return self._stored_roots[name]

    def root_containing(self, path: str | os.PathLike[str]) -> str | None:
        """The media root whose directory here holds ``path`` (the innermost when roots nest),
        compared with symbolic links resolved; None when no root does."""
        real = Path(os.path.realpath(Path(path).expanduser()))
        found: tuple[int, str] | None = None
        for root in self.reads.media_roots():
            base = self.root_path(root.name)
            if base is None:
                continue
            real_base = Path(os.path.realpath(base))
            if _inside(real, real_base) is not None and (found is None or len(real_base.parts) > found[0]):
                found = (len(real_base.parts), root.name)
        return found[1] if found is not None else None

    def confined(self, root: str, relative: os.PathLike[str] | str) -> Path | None:
        """``relative`` under media ``root``'s directory here, if it stays inside it once
        symbolic links are resolved (None: the root has no directory here, or the path leaves
        it)."""
        base = self.root_path(root)
        if base is None:
            return None
        candidate = base / relative
        if _inside(Path(os.path.realpath(candidate)), Path(os.path.realpath(base))) is None:
            return None
        return candidate

    def locate(
        self,
        path: str | os.PathLike[str],
        root: str | None,
        root_path: Callable[[str], Path | None] | None = None,
    ) -> tuple[str, Path]:
        """(stored text, absolute path) of a representation file; ``root_path`` resolves roots
        (default: this production's committed roots and root map)."""
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise InvalidArgumentError(f"representation path must be a non-empty path; got {path!r}")
        text = os.fspath(path)
        if "\x00" in text:
            raise InvalidArgumentError("representation path must not contain a NUL character")
        if root is None and type(text) is str and not text.startswith("~"):
            # the common case without pathlib's parsing: abspath normalises as Path() would
            absolute_text = os.path.abspath(text)
            return paths.encode_path(absolute_text), Path(absolute_text)
        given = Path(path).expanduser()
        if root is None:
            # abspath, not resolve(): no filesystem walk, and the path stays the one given.
            absolute = Path(os.path.abspath(given))
            return paths.encode_path(str(absolute)), absolute
        names.root_name("media root", root)
        base = (root_path or self.root_path)(root)
        if base is None:
            raise InvalidArgumentError(f"media root {root!r} has no directory on this machine; map it first")
        absolute = Path(os.path.abspath(base / given))
        relative = _inside(absolute, Path(os.path.abspath(base)))
        if relative is None:
            # The root's directory (or the path given) may go through a symlink (macOS /tmp):
            # compare both sides resolved the same way.
            relative = _inside(Path(os.path.realpath(absolute)), Path(os.path.realpath(base)))
            if relative is None:
                raise InvalidArgumentError(
                    f"representation path {given} is outside media root {root!r} ({base})"
                )
            absolute = Path(os.path.realpath(base)) / relative
        if _inside(Path(os.path.realpath(absolute)), Path(os.path.realpath(base))) is None:
            raise InvalidArgumentError(
                f"representation path {given} leaves media root {root!r} ({base}) through a symbolic link"
            )
        return paths.encode_path(relative.as_posix()), absolute

    def resolve(self, representation: Representation) -> Path | None:
        """The representation's file on this machine (None when its root is not mapped)."""
        if representation.root is None:
            return Path(representation.path)
        base = self.root_path(representation.root)
        return base / representation.path if base is not None else None

    # --- keyset pages ------------------------------------------------------------------

    def after(self, family: str, params: Sequence[str], cursor: str | None) -> bytes | None:
        """The last key of the page a cursor continues (None for the first page)."""
        if cursor is None:
            return None
        (last,) = self.cursors.decode(cursor, family, params, 1)
        try:
            return bytes.fromhex(last)
        except ValueError:
            raise InvalidArgumentError("query cursor does not match this query and its parameters") from None

    def page(
        self,
        family: str,
        params: Sequence[str],
        items: Sequence[T],
        limit: int,
        key: Callable[[T], bytes],
    ) -> Page[T]:
        """A page of ``limit`` items from ``limit + 1`` read, with the cursor to continue."""
        more = len(items) > limit
        items = items[:limit]
        next_cursor = self.cursors.encode(family, params, (key(items[-1]).hex(),)) if more else None
        return Page(tuple(items), next_cursor)


def _inside(path: Path, base: Path) -> Path | None:
    """``path`` relative to ``base``, or None when it is not inside it."""
    try:
        return path.relative_to(base)
    except ValueError:
        return None


def sample(clock: clocks.Clock) -> datetime:
    now = clock.now()
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise InternalError(f"the clock returned {now!r}; it must return a timezone-aware datetime")
    return now
