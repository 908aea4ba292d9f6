"""Export the job list as it is filtered: every job that matches, paged from the store (not
only the rows loaded in the table), to CSV or JSON. No Qt; runs on a thread of its own with
its own read-only production (see ``ProductionService.export_jobs``).

The file is written beside its target and renamed into place when complete, so a failed or
abandoned export never leaves half a file under the chosen name.
"""

from __future__ import annotations

import csv
import enum
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from postproject import Job, Production
from postproject_gui.services import reads
from postproject_gui.services.filters import JobFilter
from postproject_gui.services.types import JobRow
from postproject_gui.text import progress_text

PAGE = 1000
FIELDS = (
    "id",
    "state",
    "claim_health",
    "kind",
    "output_asset_id",
    "output_name",
    "output_kind",
    "inputs",
    "target_root",
    "claimed_by_agent",
    "claimed_by_tool",
    "claimed_at",
    "lease_expires_at",
    "requested_at",
    "diagnostic",
    "updated_sequence",
    "claimed_by_worker",
    "priority",
    "attempts",
    "finished_at",
    "progress",
)
# The fields that carry each of the job table's columns (every column a table can show is
# exported; a test holds this to ``columns.COLUMNS``).
COLUMN_FIELDS: dict[str, tuple[str, ...]] = {
    "state": ("state", "claim_health"),
    "id": ("id",),
    "kind": ("kind",),
    "output": ("output_asset_id", "output_name", "output_kind"),
    "claimed_by": ("claimed_by_worker", "claimed_by_agent", "claimed_by_tool"),
    "lease": ("claimed_at", "lease_expires_at"),
    "progress": ("progress",),
    "age": ("requested_at",),
    "diagnostic": ("diagnostic",),
    "inputs": ("inputs",),
    "requested": ("requested_at",),
    "target_root": ("target_root",),
    "revision": ("updated_sequence",),
    "job_id": ("id",),
    "priority": ("priority",),
    "finished": ("finished_at",),
}


class ExportFormat(enum.Enum):
    CSV = "csv"
    JSON = "json"

    @classmethod
    def for_path(cls, path: Path) -> ExportFormat:
        return cls.JSON if path.suffix.lower() == ".json" else cls.CSV


def record(row: JobRow, now: datetime) -> dict[str, Any]:
    """One job as a flat record (the CSV columns; the JSON keeps ``inputs`` as a list)."""
    job: Job = row.job
    claim = job.claim
    health = row.health(now)
    return {
        "id": str(job.id),
        "state": job.state.value,
        "claim_health": health.value if health else None,
        "kind": job.kind,
        "output_asset_id": str(job.output_asset_id),
        "output_name": row.output_name,
        "output_kind": job.output_representation_kind.value,
        "inputs": [str(i) for i in job.inputs],
        "target_root": job.target_root,
        "claimed_by_agent": str(claim.agent) if claim and claim.agent else None,
        "claimed_by_tool": str(claim.tool) if claim else None,
        "claimed_at": claim.claimed_at.isoformat() if claim else None,
        "lease_expires_at": claim.expires_at.isoformat() if claim else None,
        "requested_at": job.requested_at.isoformat(),
        "diagnostic": job.failure.diagnostic if job.failure else None,
        "updated_sequence": job.updated_sequence,
        "claimed_by_worker": claim.worker if claim else None,
        "priority": job.priority,
        "attempts": len(job.attempts),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "progress": progress_text.progress_text(job, now) or None,
    }


def matching_rows(production: Production, flt: JobFilter, now: datetime) -> Iterator[JobRow]:
    """Every job the filter lists, in the table's order, read page by page."""
    names = reads.NameCache()
    query = flt.store_query(now)
    cursor: str | None = None
    while True:
        page = reads.jobs_page(production, names, query, cursor, PAGE)
        for row in page.rows:
            if flt.matches(row, now, text=flt.client_side):
                yield row
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def export(production: Production, flt: JobFilter, now: datetime, path: Path, fmt: ExportFormat) -> int:
    """Write the jobs ``flt`` lists to ``path``; how many were written."""
    partial = path.with_name(f".{path.name}.partial")
    count = 0
    try:
        with partial.open("w", encoding="utf-8", newline="") as out:
            if fmt is ExportFormat.CSV:
                writer = csv.DictWriter(out, FIELDS)
                writer.writeheader()
                for row in matching_rows(production, flt, now):
                    item = record(row, now)
                    item["inputs"] = " ".join(item["inputs"])
                    writer.writerow(item)
                    count += 1
            else:
                head = {"production": str(production.path), "production_id": str(production.id)}
                out.write(json.dumps(head)[:-1])
                out.write(f', "exported_at": {json.dumps(now.isoformat())}')
                out.write(f', "filter": {json.dumps(describe(flt))}, "items": [')
                for row in matching_rows(production, flt, now):
                    out.write(("," if count else "") + "\n  " + json.dumps(record(row, now)))
                    count += 1
                out.write(f'\n], "count": {count}}}\n')
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return count


def describe(flt: JobFilter) -> dict[str, Any]:
    return {
        "state": flt.state.value if flt.state else None,
        "kind": flt.kind,
        "text": flt.text,
        "stuck": flt.stuck,
        "newest_first": flt.newest_first,
    }
