"""Rules of the design that no linter checks: who reads the wall clock, what the package exports."""

from __future__ import annotations

import ast
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
    assert offenders == [], "read time through postproject.model.clock (an injectable Clock) instead"


def test_the_public_api_is_sorted_and_complete() -> None:
    names = postproject.__all__
    assert list(names) == sorted(names, key=lambda n: (not n.isupper(), n.startswith("_"), n))
    assert all(hasattr(postproject, name) for name in names)
    public = {n for n in vars(postproject) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(names), sorted(public - set(names))


def test_every_error_code_has_one_class_and_a_cli_exit_status() -> None:
    from postproject.cli.app import EXIT_CODES
    from postproject.model.errors import ERROR_CLASSES, ErrorCode

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


# --- the engine seam (issue 11) ------------------------------------------------------------

ADAPTERS = CORE / "storage"
DRIVERS = {"sqlite3", "psycopg", "psycopg_pool", "psycopg2"}
SQL = re.compile(r"\b(SELECT\s+\S|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))")
MAX_MODULE_LINES = 600


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _private_names_defined(tree: ast.Module) -> set[str]:
    """Underscore names a module defines for its own objects (attributes, slots, methods)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.startswith("_"):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("_"):
            found.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == "__slots__":
                    found.update(
                        e.value
                        for e in ast.walk(node.value)
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    )
    return found


def test_no_module_reads_another_objects_private_attributes() -> None:
    """``x._name`` on one of our objects is only for ``self``/``cls`` or the module that defines
    ``_name`` (the seam: the core talks to the engine interface and the handle, never to
    another object's private state)."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in _modules()}
    own = {path: _private_names_defined(tree) for path, tree in trees.items()}
    ours = set().union(*own.values())
    offenders = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if (
                not isinstance(node, ast.Attribute)
                or not node.attr.startswith("_")
                or node.attr.startswith("__")
            ):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if node.attr in own[path] or node.attr not in ours:
                continue  # defined here, or not one of ours (a library's business)
            offenders.append(f"{path.relative_to(CORE)}:{node.lineno} .{node.attr}")
    assert offenders == [], offenders


def test_only_the_adapters_import_a_driver_or_hold_sql() -> None:
    offenders = []
    for path in _modules():
        if ADAPTERS in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module.split(".")[0]]
            offenders += [
                f"{path.relative_to(CORE)}:{node.lineno} imports {n}" for n in names if n in DRIVERS
            ]
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                offenders.append(f"{path.relative_to(CORE)}:{node.lineno} holds SQL")
    assert offenders == [], offenders


def test_no_core_module_is_over_the_house_limit() -> None:
    long = {
        str(path.relative_to(CORE)): n
        for path in _modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"split these modules (limit {MAX_MODULE_LINES} lines): {long}"


def _imports(path: Path, *, type_checking: bool) -> set[str]:
    """The postproject modules ``path`` imports (only those under TYPE_CHECKING, or only the others)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: set[str] = set()
    for node in ast.walk(tree):
        if (id(node) in guarded) != type_checking:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("postproject"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("postproject"))
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycle_hides_behind_type_checking() -> None:
    """A TYPE_CHECKING-only import must not point back at a module that imports us."""
    modules = {_module_name(p): p for p in _modules()}
    runtime = {
        name: {m for m in _imports(p, type_checking=False) if m in modules} for name, p in modules.items()
    }

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            current = todo.pop()
            if current == goal:
                return True
            if current not in seen:
                seen.add(current)
                todo.extend(runtime.get(current, ()))
        return False

    cycles = [
        f"{name} -> {target}"
        for name, path in modules.items()
        for target in _imports(path, type_checking=True)
        if target in modules and reaches(target, name)
    ]
    assert cycles == [], cycles
