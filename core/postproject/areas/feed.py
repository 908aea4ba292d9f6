"""The feed area of a production: revision headers, changes since a sequence, and waiting for more.

``Production`` builds one :class:`FeedReads`, given its handle, and delegates its feed
methods to it (their public docstrings are on :class:`postproject.production.Production`).
:func:`wait_changed` is the wait the attempts area shares.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from postproject.base.handle import ProductionHandle
from postproject.engine import Engine
from postproject.model import clock as clocks
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import RevisionId
from postproject.model.pages import check_limit
from postproject.model.revisions import Changes, Revision, RevisionSummary, event_kind

MAX_WAIT = timedelta(seconds=60)
MAX_SEQUENCE = 2**63 - 1
STOP_SLICE = 0.05  # seconds: how soon a wait notices ``stop``


class FeedReads:
    """Reads of the gap-free revision feed."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def latest_sequence(self) -> int:
        """The newest revision's sequence (0 when there is none); never loads events."""
        self._handle.check_open()
        return self._handle.reads.latest_sequence()

    def revisions(self, limit: int = 100, before: int | None = None) -> tuple[RevisionSummary, ...]:
        """Revision headers, newest first (those before sequence ``before``), with event counts per kind
        instead of the events themselves (a bulk edit may hold millions)."""
        self._handle.check_open()
        check_limit(limit)
        if before is not None and (isinstance(before, bool) or not isinstance(before, int) or before < 1):
            raise InvalidArgumentError(f"before must be a positive sequence; got {before!r}")
        if before is not None and before > MAX_SEQUENCE:
            before = MAX_SEQUENCE  # every stored sequence is below it
        return tuple(
            RevisionSummary(
                RevisionId(id_),
                seq,
                clocks.from_micros(at),
                origin,
                message,
                counts,
                str(uuid.UUID(bytes=subject)) if subject is not None else None,
                principal,
            )
            for seq, id_, at, origin, message, counts, subject, principal in self._handle.reads.revision_summaries(
                limit, before
            )
        )

    def commit_times(self, sequences: Iterable[int]) -> dict[int, datetime]:
        """When each of the revisions numbered ``sequences`` committed (a number no revision has
        is left out), read together."""
        self._handle.check_open()
        if isinstance(sequences, str | bytes):
            raise InvalidArgumentError("sequences must be a collection of revision numbers")
        wanted = list(sequences)
        for seq in wanted:
            if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= MAX_SEQUENCE:
                raise InvalidArgumentError(f"a revision number is a positive whole number; got {seq!r}")
        return {seq: clocks.from_micros(at) for seq, at in self._handle.reads.commit_times(wanted)}

    def latest_revision(self) -> Revision | None:
        """The newest revision, or None for a production nobody has changed yet."""
        self._handle.check_open()
        return self._handle.reads.latest_revision()

    def changes_since(self, sequence: int, limit: int = 100, kinds: Iterable[str] | None = None) -> Changes:
        """Revisions after ``sequence``, oldest first, with their events."""
        self._handle.check_open()
        if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0:
            raise InvalidArgumentError(f"sequence must be a non-negative int; got {sequence!r}")
        check_limit(limit)
        if sequence >= MAX_SEQUENCE:  # beyond any stored sequence (notes §3.2): an empty page
            return Changes((), sequence)
        kind_list: list[str] | None = None
        if kinds is not None:
            kind_list = sorted({event_kind(k) for k in kinds})
            if not kind_list:
                raise InvalidArgumentError("kinds must name at least one event kind (or be None)")
        found, through = self._handle.reads.changes_since(sequence, limit, kind_list)
        return Changes(tuple(found), through)

    def wait_for_changes(
        self,
        after_sequence: int,
        timeout: float | timedelta,
        *,
        limit: int = 100,
        kinds: Iterable[str] | None = None,
        stop: threading.Event | None = None,
    ) -> Changes:
        """Block until revisions after ``after_sequence`` exist (or ``timeout`` passes, or ``stop`` is set
        by another thread)."""
        deadline = clocks.monotonic() + _seconds(timeout)
        engine = self._handle.engine
        while True:
            token = engine.change_token()
            changes = self.changes_since(after_sequence, limit, kinds)
            if changes or not wait_changed(engine, token, deadline, stop):
                return changes

    def wait_for_head(
        self, after_sequence: int, timeout: float | timedelta, *, stop: threading.Event | None = None
    ) -> int:
        """Block until the newest revision's sequence passes ``after_sequence`` (or ``timeout``
        passes, or ``stop`` is set); that sequence. Woken as :meth:`wait_for_changes` is, reading
        only the sequence (no revision, no event)."""
        deadline = clocks.monotonic() + _seconds(timeout)
        engine = self._handle.engine
        while True:
            token = engine.change_token()
            head = self.latest_sequence()
            if head > after_sequence or not wait_changed(engine, token, deadline, stop):
                return head

    def wait_for_activity(
        self,
        after_sequence: int,
        after_progress: int,
        timeout: float | timedelta,
        *,
        limit: int = 100,
        stop: threading.Event | None = None,
        heartbeat: Callable[[], object] | None = None,
    ) -> tuple[Changes, int]:
        """Block until revisions after ``after_sequence`` exist or the progress signal
        (:meth:`progress_token`) differs from ``after_progress`` (or ``timeout`` passes, or ``stop`` is
        set); (the changes, the current progress token). What a monitor follows: one wait for both,
        woken like :meth:`wait_for_changes`, reading nothing while nothing commits (on PostgreSQL)
        however long the timeout."""
        if isinstance(after_progress, bool) or not isinstance(after_progress, int):
            raise InvalidArgumentError(f"after_progress must be an int; got {after_progress!r}")
        deadline = clocks.monotonic() + _seconds(timeout)
        engine = self._handle.engine
        while True:
            token = engine.change_token()
            changes = self.changes_since(after_sequence, limit)
            progress = self._handle.reads.progress_token()
            if changes or progress != after_progress:
                return changes, progress
            if not wait_changed(engine, token, deadline, stop, heartbeat):
                return changes, progress


def wait_changed(
    engine: Engine,
    token: object,
    deadline: float,
    stop: threading.Event | None,
    heartbeat: Callable[[], object] | None = None,
) -> bool:
    """Sleep until the engine's change token differs from ``token``; False when ``deadline``
    (monotonic seconds) passes or ``stop`` is set first. Short slices keep ``stop`` responsive
    (``heartbeat`` is called after each quiet one); nothing is read from the tables here (only
    the engine's cheap change token)."""
    while True:
        remaining = deadline - clocks.monotonic()
        if remaining <= 0 or (stop is not None and stop.is_set()):
            return False
        engine.wait_for_change(token, min(remaining, STOP_SLICE))
        if engine.change_token() != token:
            return True
        if heartbeat is not None:
            heartbeat()


def _seconds(timeout: float | timedelta) -> float:
    if isinstance(timeout, timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"timeout must be seconds or a timedelta; got {type(timeout).__name__}")
    if not 0 <= seconds <= MAX_WAIT.total_seconds():
        raise InvalidArgumentError(f"timeout must be between 0 and 60 seconds; got {seconds:g}")
    return seconds
