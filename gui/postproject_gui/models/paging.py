"""Keyset paging shared by the table models (no Qt): one page in flight at a time, a generation
that makes late pages of an abandoned query harmless, feed changes held while a page is read
(it may predate them), and a scan budget for filters applied to loaded rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

MIN_FILL = 60  # with a filter on loaded rows, keep reading pages until this many rows show...
SCAN_BUDGET = 20_000  # ... or this many were read since the view last asked


class PagedScan(Generic[K, V]):
    """Where a model is in reading its query's pages."""

    def __init__(self) -> None:
        self.generation = 0
        self.cursor: str | None = None
        self.loading = False
        self.exhausted = False
        self.scanned = 0  # rows read from the store for this query
        self.budget_used = 0  # rows read since the view last asked for more
        self.pending: dict[K, V | None] = {}

    def restart(self) -> None:
        """A new query: start from the first page; pages still in flight will be ignored."""
        self.generation += 1
        self.cursor, self.loading, self.exhausted = None, False, False
        self.scanned = self.budget_used = 0
        self.pending.clear()

    def abandon(self) -> None:
        """Ignore pages still in flight (the model is closing)."""
        self.generation += 1

    def can_fetch(self, has_loader: bool) -> bool:
        return has_loader and not self.exhausted and not self.loading

    def asked(self) -> None:
        """The view asked for more: a fresh scan budget."""
        self.budget_used = 0

    def is_current(self, generation: int) -> bool:
        return generation == self.generation

    def landed(self, count: int, next_cursor: str | None) -> dict[K, V | None]:
        """A page of ``count`` rows arrived; returns the changes held while it was read."""
        self.scanned += count
        self.budget_used += count
        self.cursor, self.exhausted, self.loading = next_cursor, next_cursor is None, False
        pending, self.pending = self.pending, {}
        return pending

    def held(self, changes: Mapping[K, V | None]) -> bool:
        """Hold feed changes while a page is being read (True when held)."""
        if self.loading:
            self.pending.update(changes)
        return self.loading

    def wants_more(self, filtering: bool, shown: int) -> bool:
        """Whether to read the next page at once: a filter on loaded rows still shows too few."""
        return filtering and not self.exhausted and shown < MIN_FILL and self.budget_used < SCAN_BUDGET
