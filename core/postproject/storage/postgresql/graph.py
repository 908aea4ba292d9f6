"""Provenance graph reads (knowledge, plans, graphs, PROV export), as SQLite's
(:mod:`postproject.storage.sqlite.graph`) in PostgreSQL's dialect.

Callers open one read snapshot (``with graph.snapshot():``) around a whole operation. Id sets
travel as ``uuid[]`` parameters (chunked like SQLite's lists, so results come in the same
order); walks go breadth first one level per query, expanding each representation in index
order, which is exactly the order SQLite's recursive query produces.
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
from postproject.storage.postgresql import rows
from postproject.storage.postgresql.reads import Reader
from postproject.storage.postgresql.types import Id, ids

CHUNK = 900  # ids per query, as SQLite's


def chunks(values: Sequence[bytes], size: int = CHUNK) -> Iterator[Sequence[bytes]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def snapshot_fingerprints(sequence: int | None, text: str | None) -> Fingerprints | None:
    """An edge snapshot as {(algorithm, version): value}; None when the edge has no snapshot."""
    if sequence is None:
        return None
    return {(a, v): bytes.fromhex(h) for a, v, h in json.loads(text or "[]")}


class Graph:
    """Provenance queries over a :class:`Reader`'s connections."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader

    @contextmanager
    def snapshot(self) -> Iterator[Graph]:
        with self._reader.snapshot():
            yield self

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._reader.snapshot():
            return self._reader.all(sql, params)

    def output_edges(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes, Fingerprints | None]]:
        found: list[tuple[bytes, bytes, Fingerprints | None]] = []
        for part in chunks(sorted(set(reps))):
            found.extend(
                (rep, activity, snapshot_fingerprints(seq, fps))
                for rep, activity, seq, fps in self.all(
                    "SELECT representation_id, activity_id, snapshot_sequence, snapshot_fingerprints "
                    "FROM activity_edges WHERE direction = 1 AND representation_id = ANY(%s) "
                    "ORDER BY representation_id, activity_id, role",
                    (ids(part),),
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
                    "FROM activity_edges WHERE direction = 0 AND activity_id = ANY(%s) "
                    "ORDER BY activity_id, representation_id, role",
                    (ids(part),),
                )
            )
        return found

    def fingerprints(self, reps: Sequence[bytes]) -> list[tuple[bytes, str, int, bytes]]:
        found: list[tuple[bytes, str, int, bytes]] = []
        for part in chunks(sorted(set(reps))):
            found.extend(
                tuple(r)
                for r in self.all(
                    "SELECT representation_id, algorithm, version, value FROM representation_fingerprints "
                    "WHERE representation_id = ANY(%s)",
                    (ids(part),),
                )
            )
        return found

    def supersessions(self, reps: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(representation, the representation that superseded it) for those of ``reps`` that
        were superseded, by representation."""
        found: list[tuple[bytes, bytes]] = []
        for part in chunks(sorted(set(reps))):
            found.extend(
                (r, s)
                for r, s in self.all(
                    "SELECT id, superseded_by FROM representations WHERE id = ANY(%s) "
                    "AND superseded_by IS NOT NULL ORDER BY id",
                    (ids(part),),
                )
            )
        return found

    def exists(self, rep: bytes) -> bool:
        return bool(self.all("SELECT 1 FROM representations WHERE id = %s", (Id(rep),)))

    def output_candidates(self, after: bytes | None, limit: int) -> list[bytes]:
        """Distinct activity outputs in id order after ``after``."""
        found = self.all(
            "SELECT DISTINCT representation_id FROM activity_edges WHERE direction = 1"
            + (" AND representation_id > %s" if after is not None else "")
            + " ORDER BY representation_id LIMIT %s",
            (*([Id(after)] if after is not None else []), limit),
        )
        return [r[0] for r in found]

    def walk(self, seeds: Sequence[bytes], *, downstream: bool, cap: int) -> tuple[list[bytes], bool]:
        """Representations reachable from ``seeds`` (excluded) through activities; (ids, truncated)."""
        near, far = (0, 1) if downstream else (1, 0)
        found: dict[bytes, None] = {}
        truncated = False
        with self._reader.snapshot():
            for part in chunks(list(dict.fromkeys(seeds))):
                limit = cap + len(part) + 1
                walked = self._breadth_first(list(part), near, far, limit)
                truncated = truncated or len(walked) > cap + len(part)
                found.update((r, None) for r in walked[len(part) : len(part) + cap])
        for seed in seeds:
            found.pop(seed, None)
        if len(found) > cap:
            truncated = True
        return list(found)[:cap], truncated

    def _breadth_first(self, seeds: list[bytes], near: int, far: int, limit: int) -> list[bytes]:
        """SQLite's ``WITH RECURSIVE ... UNION ... LIMIT`` walk: a FIFO queue, each representation
        expanded by activity id, then neighbour id and role; at most ``limit`` rows, seeds first."""
        seen: dict[bytes, None] = dict.fromkeys(seeds)
        frontier = list(seen)
        while frontier and len(seen) < limit:
            children: dict[bytes, list[bytes]] = {}
            for part in chunks(sorted(set(frontier))):
                for rep, child in self._reader.all(
                    "SELECT a.representation_id, b.representation_id FROM activity_edges a "
                    "JOIN activity_edges b ON b.activity_id = a.activity_id AND b.direction = %s "
                    "WHERE a.representation_id = ANY(%s) AND a.direction = %s "
                    "ORDER BY a.representation_id, a.activity_id, b.representation_id, b.role",
                    (far, ids(part), near),
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
        for part in chunks(reps):
            pairs.extend(
                (i, o)
                for i, o in self.all(
                    "SELECT DISTINCT i.representation_id, o.representation_id FROM activity_edges o "
                    "JOIN activity_edges i ON i.activity_id = o.activity_id AND i.direction = 0 "
                    "WHERE o.direction = 1 AND o.representation_id = ANY(%s)",
                    (ids(part),),
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
                    "SELECT activity_id FROM activity_edges WHERE direction = %s AND representation_id = ANY(%s)",
                    (direction, ids(part)),
                )
            )
        return sorted(found)

    def activity_edges(self, activities: Sequence[bytes]) -> dict[bytes, list[tuple[int, bytes, str]]]:
        edges: dict[bytes, list[tuple[int, bytes, str]]] = {a: [] for a in activities}
        for part in chunks(activities):
            for activity, direction, rep, role in self.all(
                "SELECT activity_id, direction, representation_id, role FROM activity_edges "
                "WHERE activity_id = ANY(%s) ORDER BY activity_id, direction, representation_id, role",
                (ids(part),),
            ):
                edges[activity].append((direction, rep, role))
        return edges

    # --- plans and reproducibility ------------------------------------------------------

    def plan_facts(self, wanted: Sequence[bytes]) -> PlanFacts:
        with self._reader.snapshot():
            return self._plan_facts(wanted)

    def _plan_facts(self, wanted: Sequence[bytes]) -> PlanFacts:
        param = (ids(wanted),)
        reps = {
            r[0]: (r[1], r[2])
            for r in self.all("SELECT id, asset_id, kind FROM representations WHERE id = ANY(%s)", param)
        }
        producers: dict[bytes, list[bytes]] = {}
        for rep, activity in self.all(
            "SELECT DISTINCT representation_id, activity_id FROM activity_edges WHERE direction = 1 "
            "AND representation_id = ANY(%s) ORDER BY representation_id, activity_id",
            param,
        ):
            producers.setdefault(rep, []).append(activity)
        acts = sorted({a[0] for a in producers.values() if len(a) == 1})
        kinds: dict[bytes, str] = {}
        jobs: dict[bytes, tuple[str, str | None]] = {}
        inputs: dict[bytes, list[bytes]] = {a: [] for a in acts}
        params: dict[bytes, list[tuple[str, str, str]]] = {a: [] for a in acts}
        for part in chunks(acts):
            batch = (ids(part),)
            kinds.update(
                (a, k) for a, k in self.all("SELECT id, kind FROM activities WHERE id = ANY(%s)", batch)
            )
            for activity, kind, root in self.all(
                "SELECT completion_activity_id, kind, target_root FROM jobs "
                "WHERE completion_activity_id = ANY(%s) ORDER BY completion_activity_id, id",
                batch,
            ):
                jobs.setdefault(activity, (kind, root))
            for activity, rep in self.all(
                "SELECT DISTINCT activity_id, representation_id FROM activity_edges WHERE direction = 0 "
                "AND activity_id = ANY(%s) ORDER BY activity_id, representation_id",
                batch,
            ):
                inputs[activity].append(rep)
            for activity, vocabulary, prop, value in self.all(
                "SELECT target_id, vocabulary, property, value FROM metadata "
                "WHERE target_kind = 3 AND target_id = ANY(%s) ORDER BY id",
                batch,
            ):
                params[activity].append((vocabulary, prop, value))
        return PlanFacts(reps, producers, kinds, jobs, inputs, params)

    def producing_activity(self, rep: bytes) -> list[tuple[bytes, str, str | None]]:
        """(id, kind, tool name) of each activity that outputs ``rep``."""
        return [
            (a, k, t)
            for a, k, t in self.all(
                "SELECT DISTINCT a.id, a.kind, a.tool_name FROM activity_edges e JOIN activities a "
                "ON a.id = e.activity_id WHERE e.direction = 1 AND e.representation_id = %s ORDER BY a.id",
                (Id(rep),),
            )
        ]

    def has_metadata(self, target_kind: int, target: bytes) -> bool:
        return bool(
            self.all(
                "SELECT 1 FROM metadata WHERE target_kind = %s AND target_id = %s LIMIT 1",
                (target_kind, Id(target)),
            )
        )

    def missing_inputs(self, activity: bytes) -> list[bytes]:
        return [
            r[0]
            for r in self.all(
                "SELECT DISTINCT e.representation_id FROM activity_edges e LEFT JOIN representations r "
                "ON r.id = e.representation_id WHERE e.activity_id = %s AND e.direction = 0 AND r.id IS NULL "
                "ORDER BY e.representation_id",
                (Id(activity),),
            )
        ]

    # --- graph views ---------------------------------------------------------------------

    def neighbourhood(self, focus: bytes, upstream: int, downstream: int, limit: int) -> Neighbourhood:
        """Representations, activities (with all their edges) and completing jobs around ``focus``
        (see :meth:`postproject.storage.sqlite.graph.Graph.neighbourhood`)."""
        with self._reader.snapshot():
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
                        f"SELECT {rows.JOB_COLUMNS} FROM jobs j WHERE j.completion_activity_id = ANY(%s) "
                        "ORDER BY j.id",
                        (ids(part),),
                    )
                )
        room = max(0, limit - len(reps) - len(edges))
        truncated = truncated or len(jobs) > room
        return Neighbourhood(list(reps), edges, jobs[:room], truncated)

    def representations(self, wanted: Sequence[bytes]) -> list[tuple[Representation, str | None]]:
        """Representations (with their asset's name) in id order."""
        found: list[tuple[Representation, str | None]] = []
        for part in chunks(sorted(wanted)):
            found.extend(
                (rows.representation(r[:-1]), r[-1])
                for r in self.all(
                    f"SELECT {rows.REPRESENTATION_COLUMNS}, a.name FROM representations r "
                    "JOIN assets a ON a.id = r.asset_id WHERE r.id = ANY(%s) ORDER BY r.id",
                    (ids(part),),
                )
            )
        return found

    def activities(self, wanted: Sequence[bytes]) -> list[Activity]:
        """Activities with their edges, in id order."""
        ordered = sorted(wanted)
        edges: dict[bytes, list[Any]] = {a: [] for a in ordered}
        heads: list[Any] = []
        with self._reader.snapshot():
            for part in chunks(ordered):
                batch = (ids(part),)
                heads.extend(
                    self.all(
                        f"SELECT {rows.ACTIVITY_COLUMNS} FROM activities WHERE id = ANY(%s) ORDER BY id",
                        batch,
                    )
                )
                for row in self.all(
                    f"SELECT activity_id, {rows.EDGE_COLUMNS} FROM activity_edges WHERE activity_id = ANY(%s) "
                    "ORDER BY activity_id, direction, representation_id, role",
                    batch,
                ):
                    edges[row[0]].append(row[1:])
        return [rows.activity(head, edges[head[0]]) for head in heads]

    def all_ids(self, table: str, after: bytes | None, limit: int) -> list[bytes]:
        """A keyset page of ids of ``representations`` or ``activities``."""
        assert table in ("representations", "activities")
        return [
            r[0]
            for r in self.all(
                f"SELECT id FROM {table}"
                + (" WHERE id > %s" if after is not None else "")
                + " ORDER BY id LIMIT %s",
                (*([Id(after)] if after is not None else []), limit),
            )
        ]
