"""Rules of the design that no linter checks: who reads the wall clock, what the package exports."""

from __future__ import annotations

import re
from pathlib import Path

import postproject

CORE = Path(postproject.__file__).resolve().parent
WALL_CLOCK = re.compile(
    r"\b(datetime\.now|datetime\.utcnow|time\.time|time\.time_ns|time\.monotonic|time\.sleep)\("
)


def test_only_clock_py_reads_wall_time() -> None:
    offenders = [
        f"{path.relative_to(CORE)}:{number}"
        for path in sorted(CORE.rglob("*.py"))
        if path.name != "clock.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if WALL_CLOCK.search(line)
    ]
    assert offenders == [], "read time through postproject.clock (an injectable Clock) instead"


def test_the_public_api_is_sorted_and_complete() -> None:
    names = postproject.__all__
    assert list(names) == sorted(names, key=lambda n: (not n.isupper(), n.startswith("_"), n))
    assert all(hasattr(postproject, name) for name in names)
    public = {n for n in vars(postproject) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(names), sorted(public - set(names))


def test_every_error_code_has_one_class_and_a_cli_exit_status() -> None:
    from postproject.cli.app import EXIT_CODES
    from postproject.errors import ERROR_CLASSES, ErrorCode

    assert set(ERROR_CLASSES) == set(ErrorCode)
    assert set(EXIT_CODES) == set(ErrorCode)
    assert [code.value for code in ErrorCode] == [
        "invalid_argument",
        "not_found",
        "already_exists",
        "conflict",
        "io",
        "storage",
        "migration",
        "unsupported",
        "internal",
    ]  # append-only: a rename breaks scripts
