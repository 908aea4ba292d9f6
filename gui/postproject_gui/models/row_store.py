"""Rows kept sorted by the store's order and found by job id (no Qt).

The table model holds one of these; positions are found by bisecting on the sort key, so
live updates cost O(log n) to locate even with hundreds of thousands of loaded rows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import total_ordering
from typing import Any

from postproject import JobId
from postproject.model.clock import to_micros
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import JobRow

Key = tuple[Any, ...]
END = 2**130  # sorts after every real key


@total_ordering
class _Reversed:
    """A text that sorts in reverse (a descending sort by kind)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.text == other.text

    def __lt__(self, other: _Reversed) -> bool:
        return self.text > other.text

    def __hash__(self) -> int:
        return hash(self.text)


def _column(row: JobRow, sort: str) -> Key:
    """The row's sort value in ascending store order, led by its phase for the sorts read in
    two (``postproject.storage.job_pages``): not finished yet before any finish time; held by
    a registered worker (by its name) before the jobs no worker holds."""
    job = row.job
    if sort == "kind":
        return (job.kind,)  # code-point order is the store's (UTF-8 byte) order
    if sort == "state":
        return (job.state.code,)
    if sort == "finished":
        return (0, 0) if job.finished_at is None else (1, to_micros(job.finished_at))
    if sort == "worker":
        worker = job.claim.worker if job.claim is not None else None
        return (0, worker) if worker is not None else (1, "")
    return (job.priority,)


def _down(value: Any) -> Any:
    return _Reversed(value) if isinstance(value, str) else -value


def sort_key(flt: JobFilter) -> Callable[[JobRow], Key]:
    """The key in which the store returns rows for ``flt`` (ascending list order)."""
    if flt.stuck:
        return _expiry_key
    sort, descending = flt.sort, flt.newest_first
    if sort == "requested":
        if descending:
            return lambda row: (-row.job.id.int,)
        return lambda row: (row.job.id.int,)
    if descending:  # exactly the reverse of the ascending order

        def down(row: JobRow) -> Key:
            return (*map(_down, _column(row, sort)), -row.job.id.int)

        return down
    return lambda row: (*_column(row, sort), row.job.id.int)


def _expiry_key(row: JobRow) -> Key:
    claim = row.job.claim
    expires = to_micros(claim.expires_at) if claim is not None else END
    return (expires, row.job.id.int)


class RowStore:
    """A sorted list of rows with an id index."""

    def __init__(self, key: Callable[[JobRow], Key]) -> None:
        self._key = key
        self._rows: list[JobRow] = []
        self.rows = self._rows  # read-only to callers (the same list for the store's life)
        self._keys: list[Key] = []
        self._by_id: dict[JobId, JobRow] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> JobRow:
        return self._rows[index]

    def __iter__(self) -> Iterator[JobRow]:
        return iter(self._rows)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._by_id

    def key(self, row: JobRow) -> Key:
        return self._key(row)

    def get(self, job_id: JobId) -> JobRow | None:
        return self._by_id.get(job_id)

    def index_of(self, job_id: JobId) -> int | None:
        row = self._by_id.get(job_id)
        if row is None:
            return None
        index = bisect_left(self._keys, self._key(row))
        assert self._rows[index].job.id == job_id, "row store out of order"
        return index

    def position_for(self, row: JobRow) -> int:
        return bisect_left(self._keys, self._key(row))

    def insert(self, index: int, row: JobRow) -> None:
        self._rows.insert(index, row)
        self._keys.insert(index, self._key(row))
        self._by_id[row.job.id] = row

    def extend(self, rows: list[JobRow]) -> None:
        """Append rows that sort after every row held (a next page)."""
        for row in rows:
            self._rows.append(row)
            self._keys.append(self._key(row))
            self._by_id[row.job.id] = row

    def prepend(self, rows: list[JobRow]) -> None:
        """Put rows that sort before every row held in front (an earlier page, read from the end)."""
        self._rows[:0] = rows
        self._keys[:0] = [self._key(row) for row in rows]
        for row in rows:
            self._by_id[row.job.id] = row

    def replace(self, index: int, row: JobRow) -> None:
        assert self._key(row) == self._keys[index]
        self._rows[index] = row
        self._by_id[row.job.id] = row

    def pop(self, index: int) -> JobRow:
        row = self._rows.pop(index)
        del self._keys[index]
        del self._by_id[row.job.id]
        return row
