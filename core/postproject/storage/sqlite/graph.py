"""Provenance graph reads for artifact knowledge, regeneration plans, graphs and PROV export.

Callers open one read snapshot (``with graph.snapshot():``) around a whole operation, so
every query of an evaluation, a page or a plan batch sees the same committed state. Id sets
are sent as chunked ``IN (...)`` lists; walks use recursive CTEs bounded by ``LIMIT``;
nothing pages with OFFSET.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from postproject.engine import Fingerprints, Neighbourhood, PlanFacts
from postproject.model.activities import Activity
from postproject.model.assets import Representation
from postproject.model.jobs import Job
from postproject.storage import rows
from postproject.storage.sqlite.reads import Reader

CHUNK = 900  # ids per IN (...) list: below every SQLite variable limit


def chunks(ids: Sequence[bytes], size: int = CHUNK) -> Iterator[Sequence[bytes]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _marks(count: int) -> str:
    return ",".join("?" * count)


def snapshot_fingerprints(sequence: int | None, text: str | None) -> Fingerprints | None:
    """An edge snapshot as {(algorithm, version): value}; None when the edge has no snapshot."""
    if sequence is None:
        return None
    return {(a, v): bytes.fromhex(h) for a, v, h in json.loads(text or "[]")}


class Graph:
    """Provenance queries over a :class:`Reader`'s connection."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader

    @contextmanager
    def snapshot(self) -> Iterator[Graph]:
        with self._reader.snapshot():
            yield self

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._reader.snapshot() as conn:
            return conn.execute(sql, params).fetchall()

    def output_edges(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        found: list[tuple[bytes, bytes, Fingerprints | None]] = []
        for part in chunks(sorted(set(reps))):
            found.extend(
                (rep, activity, snapshot_fingerprints(seq, fps))
                for rep, activity, seq, fps in self.all(
                    "SELECT representation_id, activity_id, snapshot_sequence, snapshot_fingerprints "
                    f"FROM activity_edges WHERE direction = 1 AND representation_id IN ({_marks(len(part))}) "
                    "ORDER BY representation_id, activity_id, role",
                    part,
                )
            )
        return found

    def input_edges(self, activities: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        found: list[tuple[bytes, bytes, Fingerprints | None]] = []
        for part in chunks(sorted(set(activities))):
            found.extend(
                (activity, rep, snapshot_fingerprints(seq, fps))
                for activity, rep, seq, fps in self.all(
                    "SELECT activity_id, representation_id, snapshot_sequence, snapshot_fingerprints "
                    f"FROM activity_edges WHERE direction = 0 AND activity_id IN ({_marks(len(part))}) "
                    "ORDER BY activity_id, representation_id, role",
                    part,
                )
            )
        return found

    def fingerprints(self, reps: Sequence[bytes]) -> list[tuple[bytes, str, int, bytes]]:
        found: list[tuple[bytes, str, int, bytes]] = []
        for part in chunks(sorted(set(reps))):
            found.extend(
                self.all(
                    "SELECT representation_id, algorithm, version, value FROM representation_fingerprints "
                    f"WHERE representation_id IN ({_marks(len(part))})",
                    part,
                )
            )
        return found

    def supersessions(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(representation, the representation that superseded it) for those of ``reps`` that
        were superseded, by representation."""
        found: list[tuple[bytes, bytes]] = []
        for part in chunks(sorted(set(reps))):
            found.extend(
                self.all(
                    f"SELECT id, superseded_by FROM representations WHERE id IN ({_marks(len(part))}) "
                    "AND superseded_by IS NOT NULL ORDER BY id",
                    part,
                )
            )
        return found

    def exists(self, rep: bytes) -> bool:
        return bool(self.all("SELECT 1 FROM representations WHERE id = ?", (rep,)))

    def output_candidates(self, after: bytes | None, limit: int) -> list[bytes]:
        """Distinct activity outputs in id order after ``after``."""
        found = self.all(
            "SELECT DISTINCT representation_id FROM activity_edges WHERE direction = 1 AND representation_id > ? "
            "ORDER BY representation_id LIMIT ?",
            (after or b"", limit),
        )
        return [r[0] for r in found]

    def walk(self, seeds: Sequence[bytes], *, downstream: bool, cap: int) -> tuple[list[bytes], bool]:
        """Representations reachable from ``seeds`` (excluded) through activities; (ids, truncated)."""
        near, far = (0, 1) if downstream else (1, 0)
        found: dict[bytes, None] = {}
        truncated = False
        for part in chunks(list(dict.fromkeys(seeds))):
            rows_ = self.all(
                f"WITH RECURSIVE walk(rep) AS (VALUES {','.join(['(?)'] * len(part))} UNION "
                "SELECT b.representation_id FROM walk w "
                "JOIN activity_edges a ON a.representation_id = w.rep AND a.direction = ? "
                "JOIN activity_edges b ON b.activity_id = a.activity_id AND b.direction = ? "
                "LIMIT ?) SELECT rep FROM walk",
                (*part, near, far, cap + len(part) + 1),
            )
            truncated = truncated or len(rows_) > cap + len(part)
            found.update((r[0], None) for r in rows_[len(part) : len(part) + cap])
        for seed in seeds:
            found.pop(seed, None)
        if len(found) > cap:
            truncated = True
        return list(found)[:cap], truncated

    def derivations(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(input, output) pairs of the activities producing ``reps``."""
        pairs: list[tuple[bytes, bytes]] = []
        for part in chunks(reps):
            pairs.extend(
                self.all(
                    "SELECT DISTINCT i.representation_id, o.representation_id FROM activity_edges o "
                    "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0 "
                    f"WHERE o.direction = 1 AND o.representation_id IN ({_marks(len(part))})",
                    part,
                )
            )
        return pairs

    def activities_of(self, reps: Sequence[bytes], direction: int) -> list[bytes]:
        """Distinct activities with any of ``reps`` on side ``direction`` (1 output, 0 input), by id."""
        found: set[bytes] = set()
        for part in chunks(reps):
            found.update(
                r[0]
                for r in self.all(
                    "SELECT activity_id FROM activity_edges WHERE direction = ? "
                    f"AND representation_id IN ({_marks(len(part))})",
                    (direction, *part),
                )
            )
        return sorted(found)

    def activity_edges(self, activities: Sequence[bytes]) -> dict[bytes, list[tuple[int, bytes, str]]]:
        edges: dict[bytes, list[tuple[int, bytes, str]]] = {a: [] for a in activities}
        for part in chunks(activities):
            for activity, direction, rep, role in self.all(
                "SELECT activity_id, direction, representation_id, role FROM activity_edges "
                f"WHERE activity_id IN ({_marks(len(part))}) ORDER BY activity_id, direction, representation_id, role",
                part,
            ):
                edges[activity].append((direction, rep, role))
        return edges

    # --- plans and reproducibility ------------------------------------------------------

    def plan_facts(self, ids: Sequence[bytes]) -> PlanFacts:
        marks = _marks(len(ids))
        reps = {r[0]: (r[1], r[2]) for r in self.all(
            f"SELECT id, asset_id, kind FROM representations WHERE id IN ({marks})", ids
        )}  # fmt: skip
        producers: dict[bytes, list[bytes]] = {}
        for rep, activity in self.all(
            f"SELECT DISTINCT representation_id, activity_id FROM activity_edges WHERE direction = 1 "
            f"AND representation_id IN ({marks}) ORDER BY representation_id, activity_id",
            ids,
        ):
            producers.setdefault(rep, []).append(activity)
        acts = sorted({a[0] for a in producers.values() if len(a) == 1})
        kinds: dict[bytes, str] = {}
        jobs: dict[bytes, tuple[str, str | None]] = {}
        inputs: dict[bytes, list[bytes]] = {a: [] for a in acts}
        params: dict[bytes, list[tuple[str, str, str]]] = {a: [] for a in acts}
        for part in chunks(acts):
            m = _marks(len(part))
            kinds.update(self.all(f"SELECT id, kind FROM activities WHERE id IN ({m})", part))
            for activity, kind, root in self.all(
                "SELECT completion_activity_id, kind, target_root FROM jobs "
                f"WHERE completion_activity_id IN ({m}) ORDER BY completion_activity_id, id",
                part,
            ):
                jobs.setdefault(activity, (kind, root))
            for activity, rep in self.all(
                "SELECT DISTINCT activity_id, representation_id FROM activity_edges WHERE direction = 0 "
                f"AND activity_id IN ({m}) ORDER BY activity_id, representation_id",
                part,
            ):
                inputs[activity].append(rep)
            for activity, vocabulary, prop, value in self.all(
                "SELECT target_id, vocabulary, property, value FROM metadata "
                f"WHERE target_kind = 3 AND target_id IN ({m}) ORDER BY id",
                part,
            ):
                params[activity].append((vocabulary, prop, value))
        return PlanFacts(reps, producers, kinds, jobs, inputs, params)

    def producing_activity(self, rep: bytes) -> list[tuple[bytes, str, str | None]]:
        """(id, kind, tool name) of each activity that outputs ``rep``."""
        return self.all(
            "SELECT DISTINCT a.id, a.kind, a.tool_name FROM activity_edges e JOIN activities a ON a.id = e.activity_id "
            "WHERE e.direction = 1 AND e.representation_id = ? ORDER BY a.id",
            (rep,),
        )

    def has_metadata(self, target_kind: int, target: bytes) -> bool:
        return bool(
            self.all(
                "SELECT 1 FROM metadata WHERE target_kind = ? AND target_id = ? LIMIT 1",
                (target_kind, target),
            )
        )

    def missing_inputs(self, activity: bytes) -> list[bytes]:
        return [
            r[0]
            for r in self.all(
                "SELECT DISTINCT e.representation_id FROM activity_edges e LEFT JOIN representations r "
                "ON r.id = e.representation_id WHERE e.activity_id = ? AND e.direction = 0 AND r.id IS NULL "
                "ORDER BY e.representation_id",
                (activity,),
            )
        ]

    # --- graph views ---------------------------------------------------------------------

    def neighbourhood(self, focus: bytes, upstream: int, downstream: int, limit: int) -> Neighbourhood:
        """Representations, activities (with all their edges) and completing jobs around ``focus``.

        Walks ``upstream`` activity hops towards inputs and ``downstream`` hops towards outputs;
        stops adding once ``limit`` nodes are reached (``truncated``).
        """
        reps: dict[bytes, None] = {focus: None}
        edges: dict[bytes, list[tuple[int, bytes, str]]] = {}
        truncated = False
        for hops, near in ((upstream, 1), (downstream, 0)):
            frontier = [focus]
            for _ in range(hops):
                new = [a for a in self.activities_of(frontier, near) if a not in edges]
                frontier = []
                for activity, activity_edges in self.activity_edges(new).items():
                    fresh = {rep for _, rep, _ in activity_edges if rep not in reps}
                    if len(reps) + len(edges) + 1 + len(fresh) > limit:
                        truncated = True
                        break
                    edges[activity] = activity_edges
                    reps.update((rep, None) for rep in sorted(fresh))
                    frontier.extend(rep for direction, rep, _ in activity_edges if direction != near)
                if truncated or not frontier:
                    break
            if truncated:
                break
        jobs: list[Job] = []
        for part in chunks(sorted(edges)):
            jobs.extend(
                rows.job(r)
                for r in self.all(
                    f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.completion_activity_id IN "
                    f"({_marks(len(part))}) ORDER BY j.id",
                    part,
                )
            )
        room = max(0, limit - len(reps) - len(edges))
        truncated = truncated or len(jobs) > room
        return Neighbourhood(list(reps), edges, jobs[:room], truncated)

    def representations(self, ids: Sequence[bytes]) -> list[tuple[Representation, str | None]]:
        """Representations (with their asset's name) in id order."""
        found: list[tuple[Representation, str | None]] = []
        for part in chunks(sorted(ids)):
            found.extend(
                (rows.representation(r[:-1]), r[-1])
                for r in self.all(
                    f"SELECT {rows.REPRESENTATION_COLUMNS}, a.name FROM representations r "
                    f"JOIN assets a ON a.id = r.asset_id WHERE r.id IN ({_marks(len(part))}) ORDER BY r.id",
                    part,
                )
            )
        return found

    def activities(self, ids: Sequence[bytes]) -> list[Activity]:
        """Activities with their edges, in id order."""
        ordered = sorted(ids)
        edges: dict[bytes, list[Any]] = {a: [] for a in ordered}
        heads: list[Any] = []
        for part in chunks(ordered):
            m = _marks(len(part))
            heads.extend(
                self.all(
                    f"SELECT {rows.ACTIVITY_COLUMNS} FROM activities WHERE id IN ({m}) ORDER BY id", part
                )
            )
            for row in self.all(
                f"SELECT activity_id, {rows.EDGE_COLUMNS} FROM activity_edges WHERE activity_id IN ({m}) "
                "ORDER BY activity_id, direction, representation_id, role",
                part,
            ):
                edges[row[0]].append(row[1:])
        return [rows.activity(head, edges[head[0]]) for head in heads]

    def all_ids(self, table: str, after: bytes | None, limit: int) -> list[bytes]:
        """A keyset page of ids of ``representations`` or ``activities``."""
        assert table in ("representations", "activities")
        return [
            r[0]
            for r in self.all(
                f"SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT ?", (after or b"", limit)
            )
        ]
