"""Text for people: ``key: value`` blocks, aligned tables and relative times (no colour).

:func:`render` turns a command's JSON document into text by its shape; it never prints
(:mod:`postproject.cli.output` does). Times and durations use the one human format of
:mod:`postproject.humanize` (shared with the monitor). Every text taken from the document
(names, messages, diagnostics, paths) has its terminal-steering characters escaped first
(:func:`safe`), so nothing stored in a production can move the cursor, ring the bell or
reorder a line. A cell cut to fit ends with "…"; the "more:" hint is safe to paste.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from postproject import humanize
from postproject.model.clock import from_micros

Row = Mapping[str, Any]
Block = Callable[[Mapping[str, Any], int], str]
Column = tuple[str, Callable[[Row, int], str]]


def render(document: Mapping[str, Any], shape: str, now: int) -> str:
    """The text of a document of ``shape`` (``page:<item>`` for pages), ``now`` in Unix µs."""
    if shape in RAW_SHAPES:
        data = dict(document)
    else:
        data = dict(safe(document, keep_lines=shape in MULTILINE_SHAPES))
    receipt = data.pop("commit_receipt", None)
    kind, _, item_shape = shape.partition(":")
    if kind == "page":
        text = table(item_shape, data.get("items", []), now)
        if data.get("truncated"):
            text += "(the search was cut off at its bound)\n"
        if data.get("next_cursor"):
            text += f"more: --cursor {shlex.quote(data['next_cursor'])}\n"
    else:
        text = _formatter(shape)(data, now)
    if receipt is not None and shape != "created":
        text += _receipt_line(receipt)
    return text


# --- values -----------------------------------------------------------------------------


MULTILINE_SHAPES = frozenset({"prov-text"})
RAW_SHAPES = frozenset(
    {"completion"}
)  # our own generated text (a shell script), never stored data  # documents whose text is meant to span lines


def safe(value: Any, *, keep_lines: bool = False) -> Any:
    """``value`` (a JSON document or part of one) with every string made
    :func:`humanize.printable` (line by line when ``keep_lines``)."""
    if isinstance(value, str):
        if keep_lines:
            return "\n".join(humanize.printable(line) for line in value.split("\n"))
        return humanize.printable(value)
    if isinstance(value, Mapping):
        return {key: safe(item, keep_lines=keep_lines) for key, item in value.items()}
    if isinstance(value, list):
        return [safe(item, keep_lines=keep_lines) for item in value]
    return value


ELLIPSIS = "…"
ESCAPED_NEWLINE = humanize.printable("\n")  # how a newline inside a value reads after safe()


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in "…" when cut."""
    return text if len(text) <= width else text[: max(0, width - 1)] + ELLIPSIS


def span(micros: int) -> str:
    """``4m 12s``, ``3m``, ``2h 05m``, ``3d 04h``, ``12s``, ``250ms`` (see :mod:`postproject.humanize`)."""
    return humanize.span(timedelta(microseconds=micros))


def relative(micros: int, now: int) -> str:
    """``in 4m 12s`` or ``3m ago``."""
    return f"in {span(micros - now)}" if micros > now else f"{span(now - micros)} ago"


def timestamp(micros: int) -> str:
    return humanize.stamp(from_micros(micros), utc=True)


def _when(micros: int, now: int) -> str:
    return f"{timestamp(micros)} ({relative(micros, now)})"


def _tool(tool: Mapping[str, Any] | None) -> str:
    if not tool:
        return "-"
    text = " ".join(str(tool[k]) for k in ("name", "version") if tool.get(k))
    return f"{text} <{tool['uri']}>" if tool.get("uri") else text


def _typed(value: Mapping[str, Any]) -> str:
    kind = value.get("type")
    if kind in ("list",):
        return "[" + ", ".join(_typed(v) for v in value["values"]) + "]"
    if kind == "struct":
        return "{" + ", ".join(f"{f['name']}: {_typed(f['value'])}" for f in value["fields"]) + "}"
    if kind == "decimal":
        return f"{value['coefficient']}e-{value['scale']}"
    if kind == "reference":
        return f"{value['target']['kind']}:{value['target']['id']}"
    if kind == "rational":
        return f"{value['numerator']}/{value['denominator']}"
    payload = {k: v for k, v in value.items() if k != "type"}
    shown = json.dumps(payload["value"]) if set(payload) == {"value"} else json.dumps(payload)
    return f"{shown} ({kind})"


def text(key: str, value: Any, now: int) -> str:
    """A field value for people."""
    if value is None:
        return "-"
    if key.endswith("_unix_micros") and isinstance(value, int):
        return _when(value, now)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        if set(value) == {"name", "version", "uri"}:
            return _tool(value)
        if set(value) == {"algorithm", "version", "hex"}:
            return f"{value['algorithm']}/{value['version']}:{value['hex']}"
        if "type" in value:
            return _typed(value)
        return ", ".join(f"{k}={text(k, v, now)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(text(key, v, now) for v in value) or "-"
    return str(value)


def _label(key: str) -> str:
    return key.removesuffix("_unix_micros").replace("_", " ")


def pairs(pairs: Sequence[tuple[str, str]]) -> str:
    width = max((len(k) for k, _ in pairs), default=0) + 1
    return "".join(f"{(k + ':').ljust(width)} {v}\n" for k, v in pairs)


OMITTED_WHEN_NULL = frozenset({"superseded_by"})  # rare facts: a line only when they hold


def block(data: Mapping[str, Any], now: int) -> str:
    return pairs(
        [(_label(k), text(k, v, now)) for k, v in data.items() if v is not None or k not in OMITTED_WHEN_NULL]
    )


def _receipt_line(receipt: Mapping[str, Any]) -> str:
    revision = receipt.get("revision")
    if revision is None:
        return "nothing changed (no revision)\n"
    return f"committed revision {revision['sequence']}\n"


# --- jobs -------------------------------------------------------------------------------


def lease_phrase(job: Row, now: int, prefix: str = "lease ") -> str:
    """``lease expires in 4m 12s`` or ``lease expired 3m ago``."""
    expires = job.get("claim_expires_at_unix_micros")
    if expires is None:
        return "-"
    if expires > now:
        return f"{prefix}expires in {span(expires - now)}"
    return f"{prefix}expired {span(now - expires)} ago"


def _job_detail(job: Row, now: int) -> str:
    state = job["state"]
    if state == "claimed":
        agent = job.get("claim_agent") or {}
        who = _tool(job.get("claim_tool")) + (f" @ {agent['name']}" if agent.get("name") else "")
        return f"{who}, {lease_phrase(job, now)}"
    if state == "succeeded":
        return f"output {job['completion_representation_id']}"
    if state == "failed":
        first, _, more = str(job.get("failure_diagnostic") or "").partition(ESCAPED_NEWLINE)
        return clip(first, DETAIL_WIDTH) if not more else clip(first, DETAIL_WIDTH - 1) + ELLIPSIS
    return f"requested {relative(job['requested_at_unix_micros'], now)}"


DETAIL_WIDTH = 60


def _job_block(job: Mapping[str, Any], now: int) -> str:
    root = f" under root {job['target_root']}" if job.get("target_root") else ""
    rows = [
        ("id", job["id"]),
        ("kind", job["kind"]),
        ("state", job["state"]),
        ("inputs", text("inputs", job["inputs"], now)),
        ("output", f"{job['output_kind']} of asset {job['output_asset_id']}{root}"),
    ]
    if job["state"] == "claimed":
        agent = job.get("claim_agent")
        worker = f" (worker {job['claim_worker']})" if job.get("claim_worker") else ""
        rows.append(
            ("claimed by", _tool(job.get("claim_tool")) + (f" @ {agent['name']}" if agent else "") + worker)
        )
        rows.append(("claimed", _when(job["claimed_at_unix_micros"], now)))
        rows.append(
            (
                "lease",
                f"{lease_phrase(job, now, prefix='')} ({timestamp(job['claim_expires_at_unix_micros'])})",
            )
        )
        if job.get("progress"):
            from postproject.cli.human_farm import progress_phrase

            rows.append(("progress", progress_phrase(job["progress"], now)))
    if job.get("stopping"):
        rows.append(("stopping", "cancelling... (waiting for the worker to confirm it stopped)"))
    if job.get("completion_representation_id"):
        rows.append(("completion output", job["completion_representation_id"]))
        rows.append(("completion activity", job["completion_activity_id"]))
    if job.get("failure_diagnostic") is not None:
        rows.append(("diagnostic", " ".join(str(job["failure_diagnostic"]).split())))
    rows.append(("requested", _when(job["requested_at_unix_micros"], now)))
    if job.get("priority"):
        rows.append(("priority", str(job["priority"])))
    if job.get("not_before_unix_micros") is not None:
        rows.append(("not before", _when(job["not_before_unix_micros"], now)))
    if job.get("max_attempts") is not None:
        rows.append(("max attempts", str(job["max_attempts"])))
    if job.get("retry_of"):
        rows.append(("retry of", job["retry_of"]))
    if job.get("retried_as"):
        rows.append(("retried as", job["retried_as"]))
    rows.extend(_dependency_rows(job))
    shown = pairs(rows)
    if job.get("attempts"):
        from postproject.cli.human_farm import attempt_lines

        shown += "attempts:\n" + attempt_lines(job["attempts"], now)
    return shown


def _dependency_rows(job: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows = []
    if job.get("waiting_on"):
        rows.append(("waiting on", ", ".join(job["waiting_on"])))
    if job.get("blocked_by"):
        rows.append(("blocked by", ", ".join(job["blocked_by"]) + " (failed or cancelled)"))
    others = [j for j in job.get("depends_on") or [] if j not in (job.get("waiting_on") or [])]
    others = [j for j in others if j not in (job.get("blocked_by") or [])]
    if others:
        rows.append(("after", ", ".join(others)))
    for bound in job.get("bound_inputs") or []:
        resolved = bound["representation_id"] or "resolved when claimed"
        rows.append(("input from job", f"{bound['job_id']} -> {resolved}"))
    if job.get("regenerates"):
        rows.append(("regenerates", job["regenerates"]))
    return rows


def _why_block(data: Mapping[str, Any], now: int) -> str:
    head = f"job {data['job_id']} is {data['state']}"
    if data["state"] == "requested":
        head += ": claimable now" if data["claimable"] else ": held back"
    return (
        head + "\n" + "".join(f"  - {r['message']}\n" for r in data["reasons"] if r["code"] != "not_pending")
    )


def _jobs_block(data: Mapping[str, Any], now: int) -> str:
    lines = [
        f"not planned: {u['artifact_representation_id']}: {u['message']}\n"
        for u in data.get("unplannable", [])
    ]
    return table("job", data.get("jobs", []), now) + "".join(lines)


# --- revisions --------------------------------------------------------------------------


def _event_text(event: Mapping[str, Any]) -> str:
    payload = {k: v for k, v in event.items() if k not in ("position", "kind")}
    details = " ".join(f"{k}={text(k, v, 0)}" for k, v in payload.items())
    return f"{event['kind']} {details}".rstrip()


def revision_line(revision: Mapping[str, Any], now: int) -> str:
    kinds = ", ".join(e["kind"] for e in revision.get("events", []))
    message = revision.get("message") or "-"
    if revision.get("principal"):
        message += f" (by {revision['principal']})"
    return (
        f"#{revision['sequence']}  {_when(revision['committed_at_unix_micros'], now)}  {message}  [{kinds}]"
    )


def _revision_block(data: Mapping[str, Any], now: int) -> str:
    revision = data.get("revision", data)
    if revision is None:
        return "no revisions yet\n"
    head = pairs(
        [
            ("revision", str(revision["sequence"])),
            ("id", revision["id"]),
            ("committed", _when(revision["committed_at_unix_micros"], now)),
            ("origin", revision.get("origin") or "-"),
            *([("principal", revision["principal"])] if revision.get("principal") else []),
            ("message", revision.get("message") or "-"),
        ]
    )
    events = "".join(f"  {e['position']:>3}  {_event_text(e)}\n" for e in revision.get("events", []))
    return head + ("events:\n" + events if events else "")


def _revisions_block(data: Mapping[str, Any], now: int) -> str:
    lines = [revision_line(r, now) + "\n" for r in data.get("revisions", [])]
    extra = ""
    if "result" in data:
        extra = f"result: {data['result']}\n"
    if "through_sequence" in data:
        extra += f"through sequence: {data['through_sequence']}\n"
    return "".join(lines) + extra


def _edge_text(edge: Mapping[str, Any]) -> str:
    role = f" as {edge['role']}" if edge.get("role") else ""
    snapshot = edge.get("snapshot")
    seen = f" (snapshot at revision {snapshot['revision_sequence']})" if snapshot else " (no snapshot)"
    return f"{edge['representation_id']}{role}{seen}"


def _activity_block(data: Mapping[str, Any], now: int) -> str:
    rows = [("id", data["id"]), ("kind", data["kind"])]
    rows += [("input", _edge_text(e)) for e in data["inputs"]]
    rows += [("output", _edge_text(e)) for e in data["outputs"]]
    rows += [
        ("tool", _tool(data["tool"])),
        ("agent", (data["agent"] or {}).get("name") or "-"),
        ("started", text("started_at_unix_micros", data["started_at_unix_micros"], now)),
        ("finished", text("finished_at_unix_micros", data["finished_at_unix_micros"], now)),
        ("revision", str(data["revision_sequence"])),
    ]
    return pairs(rows)


def _created_block(data: Mapping[str, Any], now: int) -> str:
    return f"created production {data['id']} at {data['path']}\n"


def _setting_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _config_block(data: Mapping[str, Any], now: int) -> str:
    where = data["file"]
    head = f"config file: {where['path']}" + ("" if where["exists"] else " (none there)") + "\n"
    return head + table("setting", data["items"], now)


def _completion_block(data: Mapping[str, Any], now: int) -> str:
    script = str(data["script"])
    return script if script.endswith("\n") else script + "\n"


BLOCKS: dict[str, Block] = {
    "activity": _activity_block,
    "completion": _completion_block,
    "config": _config_block,
    "created": _created_block,
    "job": _job_block,
    "jobs": _jobs_block,
    "revision": _revision_block,
    "revisions": _revisions_block,
    "why": _why_block,
}


def _formatter(shape: str) -> Block:
    from postproject.cli import human_farm, human_knowledge

    return BLOCKS.get(shape) or human_knowledge.BLOCKS.get(shape) or human_farm.BLOCKS.get(shape) or block


# --- tables -----------------------------------------------------------------------------


TABLES: dict[str, list[Column]] = {
    "job": [
        ("ID", lambda j, n: j["id"]),
        ("STATE", lambda j, n: j["state"]),
        ("KIND", lambda j, n: j["kind"]),
        ("OUTPUT", lambda j, n: j["output_kind"]),
        ("DETAIL", _job_detail),
    ],
    "asset": [
        ("ID", lambda a, n: a["id"]),
        ("NAME", lambda a, n: a["name"] or "-"),
        ("CREATED", lambda a, n: relative(a["created_at_unix_micros"], n)),
    ],
    "representation": [
        ("ID", lambda r, n: r["id"]),
        ("ASSET", lambda r, n: r["asset_id"]),
        ("KIND", lambda r, n: r["kind"]),
        ("PATH", lambda r, n: f"{r['root']}:{r['path']}" if r["root"] else r["path"]),
    ],
    "activity": [
        ("ID", lambda a, n: a["id"]),
        ("KIND", lambda a, n: a["kind"]),
        ("INPUTS", lambda a, n: str(len(a["inputs"]))),
        ("OUTPUTS", lambda a, n: str(len(a["outputs"]))),
        ("TOOL", lambda a, n: _tool(a["tool"])),
    ],
    "media_root": [
        ("NAME", lambda r, n: r["name"]),
        ("PATH", lambda r, n: r["path"] or "-"),
    ],
    "metadata": [
        ("VOCABULARY", lambda m, n: m["vocabulary"]),
        ("PROPERTY", lambda m, n: m["property"]),
        ("VALUE", lambda m, n: _typed(m["value"])),
    ],
    "setting": [
        ("KEY", lambda s, n: s["key"]),
        ("VALUE", lambda s, n: _setting_value(s["value"])),
        ("SOURCE", lambda s, n: s["source"] + (f" {s['origin']}" if s["source"] in ("env", "flag") else "")),
    ],
    "revision": [
        ("SEQ", lambda r, n: str(r["sequence"])),
        ("COMMITTED", lambda r, n: relative(r["committed_at_unix_micros"], n)),
        ("MESSAGE", lambda r, n: r.get("message") or "-"),
        ("EVENTS", lambda r, n: ", ".join(e["kind"] for e in r["events"])),
    ],
}


def _cell(key: str) -> Callable[[Row, int], str]:
    return lambda row, now: text(key, row.get(key), now)


_PLURALS = {
    "activity": "activities",
    "metadata": "metadata",
    "media_root": "media roots",
    "knowledge": "stale artifacts among those examined",
}


def table(item_shape: str, items: Sequence[Row], now: int) -> str:
    if not items:
        return f"no {_PLURALS.get(item_shape, item_shape + 's')}\n"
    from postproject.cli import human_farm, human_knowledge

    columns = (
        TABLES.get(item_shape) or human_knowledge.TABLES.get(item_shape) or human_farm.TABLES.get(item_shape)
    )
    if columns is None:
        keys = list(items[0])
        columns = [(k.upper(), _cell(k)) for k in keys]
    rows = [[head for head, _ in columns]] + [[cell(item, now) for _, cell in columns] for item in items]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return "".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n" for row in rows
    )
