"""How much of the SQLite adapter's code reappears in the PostgreSQL adapter (issue 24, item 3).

    .venv/bin/python benchmarks/adapter_overlap.py [--json]

The measure the issue defines: take every ``.py`` line of the two adapter trees
(``core/postproject/storage/sqlite`` and ``core/postproject/storage/postgresql``; the modules
both share, directly in ``storage/``, belong to neither), strip it, drop blank, comment and
import lines, and fold PostgreSQL's placeholders into SQLite's (``%s`` to ``?``, ``%(name)s``
to ``:name``). A SQLite line counts as repeated when it lies in a run of 4 consecutive such
lines that also occurs, in that order, anywhere in the PostgreSQL tree. Prints
``repeated/total``: 649/2276 before the shared SQL layer (``storage/sql``; 649/2507 before
``storage/rows.py`` was shared), 76/1088 with it; tests/core/test_storage_architecture.py
keeps it at most 300.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

STORAGE = Path(__file__).resolve().parent.parent / "core" / "postproject" / "storage"
RUN = 4
_NAMED = re.compile(r"%\((\w+)\)s")


def code_lines(tree: Path) -> list[str]:
    """The tree's counted lines, file by file in path order, stripped and folded."""
    lines: list[str] = []
    for path in sorted(tree.rglob("*.py")):
        for raw in path.read_text("utf-8").splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", "import ", "from ")):
                continue
            lines.append(_NAMED.sub(r":\1", line.replace("%s", "?")))
    return lines


def overlap(storage: Path = STORAGE) -> tuple[int, int]:
    """(repeated SQLite lines, counted SQLite lines)."""
    sqlite = code_lines(storage / "sqlite")
    postgresql = code_lines(storage / "postgresql")
    runs = {tuple(postgresql[i : i + RUN]) for i in range(len(postgresql) - RUN + 1)}
    repeated = [False] * len(sqlite)
    for i in range(len(sqlite) - RUN + 1):
        if tuple(sqlite[i : i + RUN]) in runs:
            repeated[i : i + RUN] = [True] * RUN
    return sum(repeated), len(sqlite)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a JSON object instead")
    args = parser.parse_args()
    repeated, total = overlap()
    if args.json:
        print(json.dumps({"repeated": repeated, "total": total}))
    else:
        print(f"{repeated}/{total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
