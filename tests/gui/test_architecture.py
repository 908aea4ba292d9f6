"""Rules of the monitor's shape that the import contract cannot check (the layers themselves are
the "monitor in layers" contract in pyproject.toml): only services/ touches a production, only
app.py builds the service and the session, and only actions edit a production.

The sources are read as syntax trees, so a rule holds for code no test runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import postproject_gui

GUI = Path(postproject_gui.__file__).resolve().parent
CORE_HANDLES = re.compile(r"\b(Production|Transaction)\b")  # not ProductionService


def _modules(*, outside: tuple[str, ...] = ()) -> list[tuple[str, ast.Module]]:
    """(path relative to the package, syntax tree) of every module not under ``outside``."""
    found = []
    for path in sorted(GUI.rglob("*.py")):
        relative = path.relative_to(GUI).as_posix()
        if not relative.startswith(outside):
            found.append((relative, ast.parse(path.read_text(encoding="utf-8"), relative)))
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = function.args
    return [
        *args.posonlyargs,
        *args.args,
        *args.kwonlyargs,
        *([args.vararg] if args.vararg else []),
        *([args.kwarg] if args.kwarg else []),
    ]


def test_only_services_take_a_production() -> None:
    """Every function that is given a Production (or a Transaction) is a service's: it runs on
    the service's threads, never on the GUI thread."""
    offenders = [
        f"{relative}:{node.lineno} {node.name}({parameter.arg}: {ast.unparse(parameter.annotation)})"
        for relative, tree in _modules(outside=("services/",))
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for parameter in _parameters(node)
        if parameter.annotation is not None and CORE_HANDLES.search(ast.unparse(parameter.annotation))
    ]
    assert offenders == [], "move these into services/ (the views get values, not a production)"


def test_only_services_open_or_name_a_production() -> None:
    """Outside services/ nothing imports Production or Transaction, or opens a production
    (``Production.open``): the service's threads own every connection."""
    offenders = []
    for relative, tree in _modules(outside=("services/",)):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                named = [a.name for a in node.names if CORE_HANDLES.fullmatch(a.name)]
                if named and node.module.split(".")[0] == "postproject":
                    offenders.append(f"{relative}:{node.lineno} imports {', '.join(named)}")
            elif isinstance(node, ast.Attribute) and (
                CORE_HANDLES.fullmatch(node.attr)  # postproject.Production
                or (isinstance(node.value, ast.Name) and CORE_HANDLES.fullmatch(node.value.id))  # .open
            ):
                offenders.append(f"{relative}:{node.lineno} {ast.unparse(node)}")
    assert offenders == [], "only services/ reads or writes a production"


def _called(node: ast.Call) -> str:
    """The name a call calls: ``f`` of ``f(...)`` and of ``module.f(...)``."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _constructions(tree: ast.Module, names: set[str]) -> list[tuple[int, str]]:
    return [
        (node.lineno, _called(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _called(node) in names
    ]


def test_app_builds_the_service_and_the_session() -> None:
    """``app.py`` builds the production service and the session over it (the window asks for
    them through the function app gives it); the service builds its own feed watcher."""
    offenders = [
        f"{relative}:{line} {name}(...)"
        for relative, tree in _modules()
        if relative != "app.py"
        for line, name in _constructions(tree, {"ProductionService", "MonitorSession"})
    ] + [
        f"{relative}:{line} {name}(...)"
        for relative, tree in _modules(outside=("services/",))
        for line, name in _constructions(tree, {"FeedWatcher"})
    ]
    assert offenders == [], "build services and sessions in app.py (postproject_gui.app.build_window)"


def _writes() -> set[str]:
    """The service's methods that edit the production (they run on its writer thread)."""
    tree = ast.parse((GUI / "services" / "production_service.py").read_text(encoding="utf-8"))
    (service,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ProductionService"]
    return {
        method.name
        for method in service.body
        if isinstance(method, ast.AsyncFunctionDef)
        and any(
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "_write"
            for call in ast.walk(method)
        )
    }


def test_only_actions_edit_a_production() -> None:
    """Views emit intents; the actions handle them and call the service's writes (each one
    transaction, confirmed first where it disrupts work)."""
    writes = _writes()
    assert {"request_job", "cancel_jobs", "enqueue_plans"} <= writes  # the rule still sees them
    offenders = [
        f"{relative}:{node.lineno} {ast.unparse(node.func)}"
        for relative, tree in _modules(outside=("actions/", "services/"))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in writes
    ]
    assert offenders == [], "edit through an action (postproject_gui.actions)"
