"""Provenance facts for artifact knowledge, regeneration plans, graphs and PROV export: one
implementation of :class:`postproject.engine.GraphFacts` for both engines.

Callers open one read snapshot (``with graph.snapshot():``) around a whole operation, so
every query of an evaluation, a page or a plan batch sees the same committed state. Id sets
go in chunks of :data:`CHUNK` (the dialect's ``IN (...)`` list or ``uuid[]``), so results
come in the same order on both engines; nothing pages with OFFSET. Walks run SQLite's
recursive ``WITH RECURSIVE ... UNION ... LIMIT`` query, or, where recursive queries do not
keep that order (PostgreSQL), go breadth first one level per query, expanding each
representation in index order: exactly the order SQLite's query produces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from postproject.engine import Fingerprints, PlanFacts
from postproject.model.activities import Activity
from postproject.model.assets import Representation
from postproject.model.ids import iter_chunks
from postproject.model.jobs import Job
from postproject.storage import rows
from postproject.storage.sql.dialect import Params, Runner

CHUNK = 900  # ids per list: below every SQLite variable limit


def snapshot_fingerprints(sequence: int | None, text: str | None) -> Fingerprints | None:
    """An edge snapshot as {(algorithm, version): value}; None when the edge has no snapshot."""
    if sequence is None:
        return None
    return {(a, v): bytes.fromhex(h) for a, v, h in json.loads(text or "[]")}


class Graph:
    """Provenance queries over an engine's read connections."""

    def __init__(self, reads: Runner) -> None:
        self._reads = reads
        self._dialect = reads.dialect

    @contextmanager
    def snapshot(self) -> Iterator[Graph]:
        with self._reads.snapshot():
            yield self

    def all(self, sql: str, params: Params = ()) -> list[Any]:
        """``sql`` (SQLite's placeholders) in the current snapshot, or one of its own."""
        with self._reads.snapshot():
            return self._reads.all(self._dialect.sql(sql), params)

    def _in(self, column: str, ids: Sequence[bytes]) -> tuple[str, list[Any]]:
        return self._dialect.in_ids(column, ids)

    def output_edges(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        found: list[tuple[bytes, bytes, Fingerprints | None]] = []
        for part in iter_chunks(sorted(set(reps)), CHUNK):
            match, params = self._in("representation_id", part)
            found.extend(
                (rep, activity, snapshot_fingerprints(seq, fps))
                for rep, activity, seq, fps in self.all(
                    "SELECT representation_id, activity_id, snapshot_sequence, snapshot_fingerprints "
                    f"FROM activity_edges WHERE direction = 1 AND {match} "
                    "ORDER BY representation_id, activity_id, role",
                    params,
                )
            )
        return found

    def input_edges(self, activities: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        found: list[tuple[bytes, bytes, Fingerprints | None]] = []
        for part in iter_chunks(sorted(set(activities)), CHUNK):
            match, params = self._in("activity_id", part)
            found.extend(
                (activity, rep, snapshot_fingerprints(seq, fps))
                for activity, rep, seq, fps in self.all(
                    "SELECT activity_id, representation_id, snapshot_sequence, snapshot_fingerprints "
                    f"FROM activity_edges WHERE direction = 0 AND {match} "
                    "ORDER BY activity_id, representation_id, role",
                    params,
                )
            )
        return found

    def fingerprints(self, reps: Sequence[bytes]) -> list[tuple[bytes, str, int, bytes]]:
        found: list[tuple[bytes, str, int, bytes]] = []
        for part in iter_chunks(sorted(set(reps)), CHUNK):
            match, params = self._in("representation_id", part)
            found.extend(
                (rep, algorithm, version, value)
                for rep, algorithm, version, value in self.all(
                    "SELECT representation_id, algorithm, version, value FROM representation_fingerprints "
                    f"WHERE {match}",
                    params,
                )
            )
        return found

    def supersessions(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(representation, the representation that superseded it) for those of ``reps`` that
        were superseded, by representation."""
        found: list[tuple[bytes, bytes]] = []
        for part in iter_chunks(sorted(set(reps)), CHUNK):
            match, params = self._in("id", part)
            found.extend(
                (rep, by)
                for rep, by in self.all(
                    f"SELECT id, superseded_by FROM representations WHERE {match} "
                    "AND superseded_by IS NOT NULL ORDER BY id",
                    params,
                )
            )
        return found

    def exists(self, rep: bytes) -> bool:
        return bool(self.all("SELECT 1 FROM representations WHERE id = ?", (self._dialect.id(rep),)))

    def output_candidates(self, after: bytes | None, limit: int) -> list[bytes]:
        """Distinct activity outputs in id order after ``after``."""
        found = self.all(
            "SELECT DISTINCT representation_id FROM activity_edges WHERE direction = 1"
            + (" AND representation_id > ?" if after is not None else "")
            + " ORDER BY representation_id LIMIT ?",
            (*self._after(after), limit),
        )
        return [r[0] for r in found]

    def _after(self, after: bytes | None) -> list[Any]:
        return [] if after is None else [self._dialect.id(after)]

    def walk(self, seeds: Sequence[bytes], *, downstream: bool, cap: int) -> tuple[list[bytes], bool]:
        """Representations reachable from ``seeds`` (excluded) through activities; (ids, truncated)."""
        near, far = (0, 1) if downstream else (1, 0)
        found: dict[bytes, None] = {}
        truncated = False
        with self._reads.snapshot():
            for part in iter_chunks(list(dict.fromkeys(seeds)), CHUNK):
                walked = self._walk(list(part), near, far, cap + len(part) + 1)
                truncated = truncated or len(walked) > cap + len(part)
                found.update((r, None) for r in walked[len(part) : len(part) + cap])
        for seed in seeds:
            found.pop(seed, None)
        if len(found) > cap:
            truncated = True
        return list(found)[:cap], truncated

    def _walk(self, seeds: list[bytes], near: int, far: int, limit: int) -> list[bytes]:
        """The seeds, then what they reach, in the order of SQLite's ``WITH RECURSIVE ... UNION
        ... LIMIT`` walk (a FIFO queue, each representation expanded by activity id, then
        neighbour id and role): at most ``limit`` rows."""
        if self._dialect.recursive_walk:
            return [
                r[0]
                for r in self.all(
                    f"WITH RECURSIVE walk(rep) AS (VALUES {','.join(['(?)'] * len(seeds))} UNION "
                    "SELECT b.representation_id FROM walk w "
                    "JOIN activity_edges a ON a.representation_id = w.rep AND a.direction = ? "
                    "JOIN activity_edges b ON b.activity_id = a.activity_id AND b.direction = ? "
                    "LIMIT ?) SELECT rep FROM walk",
                    (*seeds, near, far, limit),
                )
            ]
        seen: dict[bytes, None] = dict.fromkeys(seeds)
        frontier = list(seen)
        while frontier and len(seen) < limit:
            children: dict[bytes, list[bytes]] = {}
            for part in iter_chunks(sorted(set(frontier)), CHUNK):
                match, params = self._in("a.representation_id", part)
                for rep, child in self.all(
                    "SELECT a.representation_id, b.representation_id FROM activity_edges a "
                    "JOIN activity_edges b ON b.activity_id = a.activity_id AND b.direction = ? "
                    f"WHERE {match} AND a.direction = ? "
                    "ORDER BY a.representation_id, a.activity_id, b.representation_id, b.role",
                    (far, *params, near),
                ):
                    children.setdefault(rep, []).append(child)
            added: list[bytes] = []
            for rep in frontier:
                for child in children.get(rep, ()):
                    if child not in seen and len(seen) < limit:
                        seen[child] = None
                        added.append(child)
            frontier = added
        return list(seen)

    def derivations(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(input, output) pairs of the activities producing ``reps``."""
        pairs: list[tuple[bytes, bytes]] = []
        for part in iter_chunks(reps, CHUNK):
            match, params = self._in("o.representation_id", part)
            pairs.extend(
                (i, o)
                for i, o in self.all(
                    "SELECT DISTINCT i.representation_id, o.representation_id FROM activity_edges o "
                    "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0 "
                    f"WHERE o.direction = 1 AND {match}",
                    params,
                )
            )
        return pairs

    def activities_of(self, reps: Sequence[bytes], direction: int) -> list[bytes]:
        """Distinct activities with any of ``reps`` on side ``direction`` (1 output, 0 input), by id."""
        found: set[bytes] = set()
        for part in iter_chunks(reps, CHUNK):
            match, params = self._in("representation_id", part)
            found.update(
                r[0]
                for r in self.all(
                    f"SELECT activity_id FROM activity_edges WHERE direction = ? AND {match}",
                    (direction, *params),
                )
            )
        return sorted(found)

    def activity_edges(self, activities: Sequence[bytes]) -> dict[bytes, list[tuple[int, bytes, str]]]:
        edges: dict[bytes, list[tuple[int, bytes, str]]] = {a: [] for a in activities}
        for part in iter_chunks(activities, CHUNK):
            match, params = self._in("activity_id", part)
            for activity, direction, rep, role in self.all(
                "SELECT activity_id, direction, representation_id, role FROM activity_edges "
                f"WHERE {match} ORDER BY activity_id, direction, representation_id, role",
                params,
            ):
                edges[activity].append((direction, rep, role))
        return edges

    def completing_jobs(self, activities: Sequence[bytes]) -> list[Job]:
        """The jobs completed by any of ``activities`` (no attempts, no dependencies): by id
        within each chunk of the sorted activity ids."""
        jobs: list[Job] = []
        for part in iter_chunks(sorted(activities), CHUNK):
            match, params = self._in("j.completion_activity_id", part)
            jobs.extend(
                rows.job(r)
                for r in self.all(
                    f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE {match} ORDER BY j.id", params
                )
            )
        return jobs

    # --- plans and reproducibility ------------------------------------------------------

    def plan_facts(self, ids: Sequence[bytes]) -> PlanFacts:
        with self._reads.snapshot():
            match, params = self._in("id", ids)
            reps = {
                rep: (asset, kind)
                for rep, asset, kind in self.all(
                    f"SELECT id, asset_id, kind FROM representations WHERE {match}", params
                )
            }
            producers: dict[bytes, list[bytes]] = {}
            match, params = self._in("representation_id", ids)
            for rep, activity in self.all(
                "SELECT DISTINCT representation_id, activity_id FROM activity_edges WHERE direction = 1 "
                f"AND {match} ORDER BY representation_id, activity_id",
                params,
            ):
                producers.setdefault(rep, []).append(activity)
            acts = sorted({a[0] for a in producers.values() if len(a) == 1})
            kinds: dict[bytes, str] = {}
            jobs: dict[bytes, tuple[str, str | None]] = {}
            inputs: dict[bytes, list[bytes]] = {a: [] for a in acts}
            parameters: dict[bytes, list[tuple[str, str, str]]] = {a: [] for a in acts}
            for part in iter_chunks(acts, CHUNK):
                match, params = self._in("id", part)
                kinds.update(
                    (a, k) for a, k in self.all(f"SELECT id, kind FROM activities WHERE {match}", params)
                )
                match, params = self._in("completion_activity_id", part)
                for activity, kind, root in self.all(
                    f"SELECT completion_activity_id, kind, target_root FROM jobs WHERE {match} "
                    "ORDER BY completion_activity_id, id",
                    params,
                ):
                    jobs.setdefault(activity, (kind, root))
                match, params = self._in("activity_id", part)
                for activity, rep in self.all(
                    "SELECT DISTINCT activity_id, representation_id FROM activity_edges WHERE direction = 0 "
                    f"AND {match} ORDER BY activity_id, representation_id",
                    params,
                ):
                    inputs[activity].append(rep)
                match, params = self._in("target_id", part)
                for activity, vocabulary, prop, value in self.all(
                    f"SELECT target_id, vocabulary, property, value FROM metadata WHERE target_kind = 3 AND {match} "
                    "ORDER BY id",
                    params,
                ):
                    parameters[activity].append((vocabulary, prop, value))
        return PlanFacts(reps, producers, kinds, jobs, inputs, parameters)

    def producing_activity(self, rep: bytes) -> list[tuple[bytes, str, str | None]]:
        """(id, kind, tool name) of each activity that outputs ``rep``."""
        return [
            (a, k, t)
            for a, k, t in self.all(
                "SELECT DISTINCT a.id, a.kind, a.tool_name FROM activity_edges e JOIN activities a "
                "ON a.id = e.activity_id WHERE e.direction = 1 AND e.representation_id = ? ORDER BY a.id",
                (self._dialect.id(rep),),
            )
        ]

    def has_metadata(self, target_kind: int, target: bytes) -> bool:
        return bool(
            self.all(
                "SELECT 1 FROM metadata WHERE target_kind = ? AND target_id = ? LIMIT 1",
                (target_kind, self._dialect.id(target)),
            )
        )

    def missing_inputs(self, activity: bytes) -> list[bytes]:
        return [
            r[0]
            for r in self.all(
                "SELECT DISTINCT e.representation_id FROM activity_edges e LEFT JOIN representations r "
                "ON r.id = e.representation_id WHERE e.activity_id = ? AND e.direction = 0 AND r.id IS NULL "
                "ORDER BY e.representation_id",
                (self._dialect.id(activity),),
            )
        ]

    # --- graph views ---------------------------------------------------------------------

    def representations(self, ids: Sequence[bytes]) -> list[tuple[Representation, str | None]]:
        """Representations (with their asset's name) in id order."""
        found: list[tuple[Representation, str | None]] = []
        for part in iter_chunks(sorted(ids), CHUNK):
            match, params = self._in("r.id", part)
            found.extend(
                (rows.representation(r[:-1]), r[-1])
                for r in self.all(
                    f"SELECT {self._dialect.representation_columns}, a.name FROM representations r "
                    f"JOIN assets a ON a.id = r.asset_id WHERE {match} ORDER BY r.id",
                    params,
                )
            )
        return found

    def activities(self, ids: Sequence[bytes]) -> list[Activity]:
        """Activities with their edges, in id order."""
        ordered = sorted(ids)
        edges: dict[bytes, list[Any]] = {a: [] for a in ordered}
        heads: list[Any] = []
        with self._reads.snapshot():
            for part in iter_chunks(ordered, CHUNK):
                match, params = self._in("id", part)
                heads.extend(
                    self.all(
                        f"SELECT {rows.ACTIVITY_COLUMNS} FROM activities WHERE {match} ORDER BY id", params
                    )
                )
                match, params = self._in("activity_id", part)
                for row in self.all(
                    f"SELECT activity_id, {rows.EDGE_COLUMNS} FROM activity_edges WHERE {match} "
                    "ORDER BY activity_id, direction, representation_id, role",
                    params,
                ):
                    edges[row[0]].append(row[1:])
        return [rows.activity(head, edges[head[0]]) for head in heads]

    def all_ids(self, table: str, after: bytes | None, limit: int) -> list[bytes]:
        """A keyset page of ids of ``representations`` or ``activities``."""
        assert table in ("representations", "activities")
        found = self.all(
            f"SELECT id FROM {table}"
            + (" WHERE id > ?" if after is not None else "")
            + " ORDER BY id LIMIT ?",
            (*self._after(after), limit),
        )
        return [r[0] for r in found]
