"""Human text for the farm layer: workers, attempts, loss sweeps (see :mod:`.human`)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from postproject.cli.human import Block, Column, Row, _tool, _when, pairs, relative, table


def _who(attempt: Mapping[str, Any]) -> str:
    if attempt.get("worker"):
        return f"worker {attempt['worker']}"
    agent = attempt.get("agent") or {}
    return f"agent {agent['name']}" if agent.get("name") else _tool(attempt.get("tool"))


def attempt_lines(attempts: Sequence[Mapping[str, Any]], now: int) -> str:
    """One line per attempt: ``#2 lost  worker render-07  claimed 3m ago, ended 1m ago``."""
    lines = []
    for a in attempts:
        outcome = a.get("outcome") or "running"
        if a.get("stopping"):
            outcome += " (stopping...)"
        ended = f", ended {relative(a['ended_at_unix_micros'], now)}" if a.get("ended_at_unix_micros") else ""
        if a.get("stopped_at_unix_micros") and a["stopped_at_unix_micros"] != a.get("ended_at_unix_micros"):
            ended += f", stopped {relative(a['stopped_at_unix_micros'], now)}"
        why = f" ({' '.join(str(a['diagnostic']).split())})" if a.get("diagnostic") else ""
        lines.append(
            f"  #{a['number']} {outcome:<9} {_who(a)}  claimed {relative(a['claimed_at_unix_micros'], now)}{ended}{why}"
        )
    return "".join(line + "\n" for line in lines)


def progress_phrase(progress: Mapping[str, Any], now: int) -> str:
    """``42% encode: frame 120 of 288 (3s ago)``."""
    parts = []
    if progress.get("fraction") is not None:
        parts.append(f"{progress['fraction'] * 100:.0f}%")
    if progress.get("stage"):
        parts.append(str(progress["stage"]))
    head = " ".join(parts)
    if progress.get("message"):
        head = f"{head}: {progress['message']}" if head else str(progress["message"])
    return f"{head} ({relative(progress['updated_at_unix_micros'], now)})"


def _load(w: Row) -> str:
    return f"{len(w.get('running') or [])}/{w['capacity']}"


def _outcomes(w: Row) -> str:
    counts = w.get("attempts") or {}
    return f"{counts.get('succeeded', 0)} ok, {counts.get('failed', 0)} failed, {counts.get('lost', 0)} lost"


def _worker_block(w: Mapping[str, Any], now: int) -> str:
    rows = [
        ("name", w["name"]),
        ("state", w["state"]),
        ("host", w.get("host") or "-"),
        ("last seen", _when(w["last_seen_unix_micros"], now)),
        ("capacity used", _load(w)),
        ("kinds", ", ".join(w["kinds"]) if w.get("kinds") else "any"),
        ("running", ", ".join(w.get("running") or []) or "-"),
        ("attempts", _outcomes(w)),
    ]
    text = pairs(rows)
    attempts = w.get("attempts_list") or []
    return text + ("newest attempts:\n" + attempt_lines(attempts, now) if attempts else "")


def _sweep_block(data: Mapping[str, Any], now: int) -> str:
    count = data["finalized"]
    return f"finalized {count} lost claim{'s' if count != 1 else ''}\n"


def _failures_block(data: Mapping[str, Any], now: int) -> str:
    groups = data.get("groups", [])
    if not groups:
        return "no failed jobs\n"
    lines = []
    for g in groups:
        lines.append(f"{g['count']} failed: {g['reason']}\n")
        if g["search"]:
            lines.append(
                f"    list them: postproject job list PROD --state failed --search {shlex.quote(g['search'])}\n"
            )
    return "".join(lines)


BLOCKS: dict[str, Block] = {"worker": _worker_block, "sweep": _sweep_block, "failures": _failures_block}

TABLES: dict[str, list[Column]] = {
    "worker": [
        ("NAME", lambda w, n: w["name"]),
        ("STATE", lambda w, n: w["state"]),
        ("LAST SEEN", lambda w, n: relative(w["last_seen_unix_micros"], n)),
        ("LOAD", lambda w, n: _load(w)),
        ("HOST", lambda w, n: w.get("host") or "-"),
        ("ATTEMPTS", lambda w, n: _outcomes(w)),
    ],
}

__all__ = ["BLOCKS", "TABLES", "attempt_lines", "table"]
