"""Column lists in PostgreSQL's dialect; rows map to the domain through SQLite's row functions.

Ids load as ``bytes`` and JSON as text (:mod:`.types`), so one set of row functions
(:mod:`postproject.storage.rows`) serves both engines and they cannot drift apart.
Column lists that are plain SQL are shared too; only those using SQLite's JSON functions
are written again here, producing the same text.
"""

from __future__ import annotations

from postproject.storage.rows import (
    ACTIVITY_COLUMNS,
    ASSET_COLUMNS,
    ATTEMPT_COLUMNS,
    ATTEMPT_COUNT,
    DEPENDENCY_COLUMNS,
    DEPENDENCY_COUNT,
    EDGE_COLUMNS,
    JOB_COLUMNS,
    REVISION_COLUMNS,
    activity,
    asset,
    attempt,
    fingerprints,
    job,
    media_root,
    representation,
    revision,
    split_ids,
)

# [[algorithm, version, HEX], ...] by algorithm and version, as SQLite's json_group_array writes it.
# (No % here: these lists are parts of parameterised queries.)
FINGERPRINTS_JSON = """(SELECT coalesce('[' || string_agg('[' || to_json(f.algorithm)::text || ',' || f.version
    || ',"' || upper(encode(f.value, 'hex')) || '"]', ',' ORDER BY f.algorithm, f.version) || ']', '[]')
    FROM representation_fingerprints f WHERE f.representation_id = {rep})"""

REPRESENTATION_COLUMNS = (
    "r.id, r.asset_id, r.kind, r.path, r.root_name, r.size, r.mtime, r.created_at, "
    + FINGERPRINTS_JSON.format(rep="r.id")
    + ", r.superseded_by"
)

__all__ = [
    "ACTIVITY_COLUMNS",
    "ASSET_COLUMNS",
    "ATTEMPT_COLUMNS",
    "ATTEMPT_COUNT",
    "DEPENDENCY_COLUMNS",
    "DEPENDENCY_COUNT",
    "EDGE_COLUMNS",
    "FINGERPRINTS_JSON",
    "JOB_COLUMNS",
    "REPRESENTATION_COLUMNS",
    "REVISION_COLUMNS",
    "activity",
    "asset",
    "attempt",
    "fingerprints",
    "job",
    "media_root",
    "representation",
    "revision",
    "split_ids",
]
