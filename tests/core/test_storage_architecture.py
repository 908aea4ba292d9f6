"""One SQL layer for both engines (issue 24, item 3): what the storage code must keep to.

The statements both adapters share live once in ``storage/sql`` (the adapters keep their own
only where their plan differs), so the adapters repeat each other little; and SQL in Python
names a job's state by its code (``JobState.X.code``), never by a number, so storage and the
lifecycle table cannot drift apart. (The import-linter contracts in pyproject.toml keep the
adapters apart and the shared layer free of drivers.)
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import postproject

STORAGE = Path(postproject.__file__).resolve().parent / "storage"
OVERLAP_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "adapter_overlap.py"
MAX_REPEATED = 300  # SQLite adapter lines repeated in the PostgreSQL adapter (649 before the shared layer)
# A state compared with a number: "state = 2", "j.state <> 4", "old_state = 2", "state IN (1, 2)".
LITERAL_STATE = re.compile(
    r"\b\w*state\s*(?:=|<>|!=|<=|>=|<|>)\s*\d|\b\w*state\s+(?:NOT\s+)?IN\s*\(\s*\d", re.I
)


def _string_parts(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal of a module, and each literal part of its f-strings, with its line."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_storage_sql_names_job_states_by_their_codes() -> None:
    offenders = [
        f"{path.relative_to(STORAGE)}:{line}: {match.group(0)!r}"
        for path in sorted(STORAGE.rglob("*.py"))
        for line, text in _string_parts(ast.parse(path.read_text(encoding="utf-8")))
        for match in LITERAL_STATE.finditer(text)
    ]
    assert offenders == [], "write JobState.X.code (postproject.model.lifecycle), not a number"


def test_the_check_finds_a_literal_state() -> None:
    tree = ast.parse(
        'SQL = f"UPDATE jobs SET x = 1 WHERE j.state = 2 AND {y}"\nOK = f"WHERE state = {CLAIMED}"'
    )
    assert [m.group(0) for _, text in _string_parts(tree) for m in LITERAL_STATE.finditer(text)] == [
        "state = 2"
    ]


def test_the_adapters_repeat_each_other_little() -> None:
    spec = importlib.util.spec_from_file_location("adapter_overlap", OVERLAP_SCRIPT)
    assert spec is not None and spec.loader is not None
    overlap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(overlap)
    repeated, total = overlap.overlap(STORAGE)
    assert total > 500, "the measure reads both adapter trees"
    assert repeated <= MAX_REPEATED, (
        f"{repeated} of {total} SQLite adapter lines reappear in the PostgreSQL one"
    )
