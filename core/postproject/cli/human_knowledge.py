"""Text for people about artifacts: knowledge, reproducibility, plans and provenance graphs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from postproject.cli.human import Block, Column, pairs, text


def _knowledge_block(data: Mapping[str, Any], now: int) -> str:
    head = pairs(
        [
            ("artifact", data["representation_id"]),
            ("state", data["state"] + (" (evaluation truncated)" if data["truncated"] else "")),
            ("visited", f"{data['visited_representations']} representations"),
        ]
    )
    return head + "".join(f"  - {r['description']}\n" for r in data["reasons"])


def _issue(issue: Mapping[str, Any]) -> str:
    fields = " ".join(f"{k}={text(k, v, 0)}" for k, v in issue.items() if k != "code")
    return f"  - {issue['code']} {fields}".rstrip() + "\n"


def _reproducibility_block(data: Mapping[str, Any], now: int) -> str:
    activity = data["activity_id"] or "-"
    if data["activity_kind"]:
        activity += f" ({data['activity_kind']})"
    head = pairs(
        [
            ("artifact", data["representation_id"]),
            ("reproducible", "yes" if data["reproducible"] else "no"),
            ("activity", activity),
        ]
    )
    return head + "".join(_issue(i) for i in data["issues"])


def _plan_text(plan: Mapping[str, Any]) -> str:
    job = plan["job"]
    root = f" under root {job['target_root']}" if job["target_root"] else ""
    lines = [
        f"{plan['artifact_representation_id']}: {job['kind']} -> {job['output_kind']} of asset "
        f"{job['output_asset_id']}{root}\n",
        f"  inputs: {', '.join(job['inputs']) or '-'}\n",
    ]
    lines += [
        f"  input {i} takes the output of the job regenerating it\n" for i in plan.get("bound_inputs", [])
    ]
    lines += [
        f"  input {s['input_id']} was superseded by {s['current_id']}\n"
        for s in plan.get("superseded_inputs", [])
    ]
    lines += [
        f"  {p['vocabulary']} {p['property']} = {text('value', p['value'], 0)}\n" for p in plan["parameters"]
    ]
    return "".join(lines)


def _plans_block(data: Mapping[str, Any], now: int) -> str:
    out = "".join(_plan_text(p) for p in data["plans"]) or "nothing to regenerate\n"
    out += "".join(
        f"not planned: {u['artifact_representation_id']}: {u['message']}\n" for u in data["unplannable"]
    )
    return out + ("(the search was cut off at its bound)\n" if data["truncated"] else "")


def _node_text(node: Mapping[str, Any]) -> str:
    if node["type"] == "representation":
        where = f"{node['root']}:{node['path']}" if node["root"] else node["path"]
        online = f", {node['availability']}" if node["availability"] else ""
        replaced = f", superseded by {node['superseded_by']}" if node.get("superseded_by") else ""
        return f"representation {node['id']}  {node['kind']} ({node['state']}{online}{replaced})  {where}"
    if node["type"] == "activity":
        return f"activity       {node['id']}  {node['kind']}"
    return f"job            {node['id']}  {node['kind']} ({node['state']})"


def _provenance_block(data: Mapping[str, Any], now: int) -> str:
    lines = [f"focus: {data['focus']}{' (graph truncated)' if data['truncated'] else ''}\n", "nodes:\n"]
    lines += [f"  {_node_text(n)}\n" for n in data["nodes"]]
    lines.append("edges:\n")
    lines += [
        f"  {e['source']} -{e['relation']}-> {e['target']}{' as ' + e['role'] if e['role'] else ''}\n"
        for e in data["edges"]
    ]
    return "".join(lines)


def _prov_json(data: Mapping[str, Any], now: int) -> str:
    return json.dumps(data, indent=2) + "\n"


def _prov_text(data: Mapping[str, Any], now: int) -> str:
    document = str(data["document"])
    return document if document.endswith("\n") else document + "\n"


BLOCKS: dict[str, Block] = {
    "knowledge": _knowledge_block,
    "reproducibility": _reproducibility_block,
    "plans": _plans_block,
    "provenance": _provenance_block,
    "prov-json": _prov_json,
    "prov-text": _prov_text,
}

TABLES: dict[str, list[Column]] = {
    "knowledge": [
        ("ARTIFACT", lambda k, n: k["representation_id"]),
        ("STATE", lambda k, n: k["state"]),
        ("FIRST REASON", lambda k, n: k["reasons"][0]["description"] if k["reasons"] else "-"),
    ],
}
