"""A commit's queued inserts of new rows as ``pp_commit``'s one jsonb parameter (migration
0012, :mod:`.writes`): each row keyed by the columns the function reads, ids as hex.

The rows are the parameters of the statements they replace (the shared ``INSERT_ASSET`` and
``INSERT_METADATA``, :data:`.statements.INSERT_REPRESENTATION` and
:data:`.statements.INSERT_ACTIVITY`), taken as they were queued, so nothing else of the edit
changes with the form they travel in.
"""

from __future__ import annotations

import json
from typing import Any

from postproject.storage.postgresql.pipeline import Entry

# The schema version that has pp_commit: a production opened by this release is upgraded to
# it first (only a schema kept older on purpose, by a test of older productions, lacks it).
VERSION = 12


def packed(entries: list[Entry] | None) -> tuple[str, list[Entry]] | None:
    """The rows ``entries`` insert as ``pp_commit``'s jsonb text (0012), with the entries; None
    when there are none, or a text value JSON cannot carry as the driver would (a NUL, which
    PostgreSQL's text refuses, or an unpaired surrogate): those go as statements, whose error is
    the driver's own."""
    if not entries:
        return None
    rows: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        assert entry.pack is not None
        assert entry.params is not None
        rows.setdefault(entry.pack, []).append(_PACKERS[entry.pack](entry.params))
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    if "\\u0000" in text:
        return None
    try:
        text.encode()
    except UnicodeEncodeError:
        return None
    return text, entries


def _pack_asset(params: Any) -> dict[str, Any]:  # q.INSERT_ASSET's
    asset, name, now, _ = params
    return {"id": asset.hex(), "name": name, "created_at": now}


def _pack_metadata(params: Any) -> dict[str, Any]:  # q.INSERT_METADATA's
    kind, target, vocabulary, name, value, _ = params
    return {"kind": kind, "target": target.hex(), "vocabulary": vocabulary, "property": name, "value": value}


def _pack_representation(p: Any) -> dict[str, Any]:  # pg.INSERT_REPRESENTATION's
    return {
        "id": p["id"].hex(), "asset": p["asset"].hex(), "kind": p["kind"], "path": p["path"],
        "root": p["root"], "size": p["size"], "mtime": p["mtime"], "created_at": p["now"],
        "algorithm": p["algorithm"], "version": p["version"], "value": p["value"].hex(),
        "message": p["message"],
    }  # fmt: skip


def _pack_activity(p: Any) -> dict[str, Any]:  # pg.INSERT_ACTIVITY's
    return {
        "id": p["id"].hex(), "kind": p["kind"], "tool_name": p["tool_name"],
        "tool_version": p["tool_version"], "tool_uri": p["tool_uri"], "agent": p["agent"],
        "started": p["started"], "finished": p["finished"], "reps": [r.hex() for r in p["reps"]],
        "directions": p["directions"], "edges": [r.hex() for r in p["edges"]], "roles": p["roles"],
        "message": p["message"],
    }  # fmt: skip


_PACKERS = {
    "assets": _pack_asset,
    "metadata": _pack_metadata,
    "representations": _pack_representation,
    "activities": _pack_activity,
}
