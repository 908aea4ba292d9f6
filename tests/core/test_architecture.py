"""Rules of the design that no linter checks: who reads the wall clock, what the package exports,
how classes and packages are shaped."""

from __future__ import annotations

import ast
import builtins
import functools
import os
import re
import subprocess
import sys
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


# --- one shape a newcomer can see (issue 24, items 1 and 2) --------------------------------
#
# Each rule reads the sources under CORE (the tree under test), so it can be pointed at another
# checkout. Names are resolved through each module's imports: "the class X that module M
# names" is where X is defined, not where it was imported from.

ERROR_ROOT = "PostProjectError"  # defined in postproject.model.errors
ENGINE = "postproject.engine"
# Module-level state that is process-wide by nature, written at run time on purpose:
# - storage/signals.py: the wake-up table keyed by location. Two Production objects on one
#   file in one process must wake each other's feed waiters at once, so the table cannot
#   belong to either of them.
# - model/ids.py: the UUIDv7 counter (RFC 9562 method 1). Ids made in one process must be
#   monotonic whichever production makes them, so the last (millisecond, counter) is one per
#   process.
PROCESS_WIDE_STATE = {
    ("storage/signals.py", "_signals"),
    ("storage/signals.py", "_generations"),
    ("model/ids.py", "_uuid7_last"),
}
MUTABLE_FACTORIES = {
    "dict",
    "set",
    "list",
    "collections.defaultdict",
    "collections.OrderedDict",
    "collections.Counter",
    "collections.deque",
    "weakref.WeakKeyDictionary",
    "weakref.WeakValueDictionary",
    "weakref.WeakSet",
}
MUTATORS = {
    "add",
    "append",
    "appendleft",
    "clear",
    "discard",
    "extend",
    "insert",
    "pop",
    "popitem",
    "remove",
    "setdefault",
    "update",
    "__setitem__",
    "__delitem__",
}
MAX_TOP_LEVEL_MODULES = 14
COMPATIBILITY_MODULES = ("prov", "provenance", "regeneration")
FRONT_ENDS = ("cli", "executor", "service")


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _module_path(module: str) -> Path | None:
    """The source of a postproject module (None for anything else)."""
    parts = module.split(".")
    if parts[0] != CORE.name:
        return None
    base = CORE.parent.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_names(module: str) -> dict[str, str]:
    """What each name a module imports stands for: ``package.module.Name`` or ``package.module``."""
    path = _module_path(module)
    found: dict[str, str] = {}
    if path is None:
        return found
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module:  # (ruff bans relative imports)
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    found[alias.name.split(".")[0]] = alias.name.split(".")[0]
    return found


def _defined(dotted: str, seen: frozenset[str] = frozenset()) -> str:
    """Where ``package.module.Name`` is defined, following re-exports (itself when unknown)."""
    module, _, name = dotted.rpartition(".")
    if not module or dotted in seen or _module_path(dotted) is not None:
        return dotted  # a module, or a cycle
    imported = _imported_names(module).get(name)
    if imported is None:
        return dotted
    return _defined(imported, seen | {dotted})


def _resolve(module: str, expr: ast.expr) -> str:
    """The defining name of an expression like ``Name`` or ``package.Name`` seen in ``module``."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.insert(0, expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return ast.unparse(expr)
    head = _imported_names(module).get(expr.id)
    if head is None:
        head = expr.id if hasattr(builtins, expr.id) else f"{module}.{expr.id}"
    return _defined(".".join([head, *parts]))


def _classes() -> dict[str, tuple[Path, ast.ClassDef]]:
    """Every top-level class of the core by its defining name."""
    found = {}
    for path in _modules():
        module = _module_name(path)
        for node in _tree(path).body:
            if isinstance(node, ast.ClassDef):
                found[f"{module}.{node.name}"] = (path, node)
    return found


def _project_bases(classes: dict[str, tuple[Path, ast.ClassDef]]) -> dict[str, list[str]]:
    """Each class's bases defined in the core, except the engine's Protocols (interfaces with
    no code to inherit: an adapter may implement several, and one may extend another)."""
    bases: dict[str, list[str]] = {}
    protocols = set()
    for name, (path, node) in classes.items():
        resolved = [_resolve(_module_name(path), b) for b in node.bases]
        bases[name] = [b for b in resolved if b in classes]
        if "typing.Protocol" in resolved and name.startswith(ENGINE + "."):
            protocols.add(name)
    return {name: [b for b in found if b not in protocols] for name, found in bases.items()}


def _errors(bases: dict[str, list[str]]) -> set[str]:
    """The error tree: classes whose core ancestry reaches PostProjectError."""
    tree = {name for name in bases if name.rpartition(".")[2] == ERROR_ROOT}
    grew = True
    while grew:
        grew = False
        for name, found in bases.items():
            if name not in tree and any(b in tree for b in found):
                tree.add(name)
                grew = True
    return tree


def one_base_offenders() -> set[str]:
    """Classes built from several core bases, or on a core base that has a core base itself."""
    bases = _project_bases(_classes())
    errors = _errors(bases)
    offenders = set()
    for name, found in bases.items():
        if name in errors:
            continue  # callers catch errors by their place in the tree (except ConflictError)
        if len(found) > 1 or any(bases.get(b) for b in found):
            offenders.add(name)
    return offenders


def test_no_class_is_built_from_a_chain_of_core_bases() -> None:
    """Facades delegate to one object per area; nothing inherits behaviour from more than one
    core class, or from a core class that inherits from another (issue 24 item 1)."""
    offenders = one_base_offenders()
    assert offenders == set(), sorted(offenders)


def not_implemented_offenders() -> list[str]:
    offenders = []
    for path in _modules():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                    offenders.append(f"{path.relative_to(CORE).as_posix()}:{node.lineno}")
    return offenders


def test_no_not_implemented_stand_ins() -> None:
    """A method only some classes can answer is a sign of a mixin; give the object what it needs."""
    assert not_implemented_offenders() == []


def _module_level_containers(module: str, tree: ast.Module) -> dict[str, int]:
    """Names a module binds at its top level to a mutable container (name -> line)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        mutable = isinstance(value, (ast.Dict, ast.Set, ast.List, ast.DictComp, ast.SetComp, ast.ListComp))
        if isinstance(value, ast.Call):
            mutable = _resolve(module, value.func) in MUTABLE_FACTORIES
        if mutable:
            found.update({t.id: node.lineno for t in targets if isinstance(t, ast.Name)})
    return found


def _written_in_functions(tree: ast.Module) -> dict[str, int]:
    """Names some function changes in place (item or slice stores, deletes, mutating calls)."""
    found: dict[str, int] = {}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(function):
            target = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                target = node.value
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
                target = node.target.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
            ):
                target = node.func.value
            if isinstance(target, ast.Name):
                found.setdefault(target.id, node.lineno)
    return found


def registry_offenders() -> list[str]:
    """Module-global state written at run time: ``global`` statements, module-level weak
    dictionaries and sets, and module-level containers that functions fill."""
    offenders = []
    for path in _modules():
        where = str(path.relative_to(CORE).as_posix())
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                offenders += [f"{where}:{node.lineno} global {n}" for n in node.names]
        containers = _module_level_containers(_module_name(path), tree)
        written = _written_in_functions(tree)
        for name, line in containers.items():
            if (where, name) in PROCESS_WIDE_STATE:
                continue
            value = next(
                n.value
                for n in tree.body
                if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno == line and n.value is not None
            )
            weak = isinstance(value, ast.Call) and _resolve(_module_name(path), value.func).startswith(
                "weakref."
            )
            if weak or name in written:
                offenders.append(f"{where}:{line} {name}")
    return offenders


def test_no_module_global_registry() -> None:
    """State belongs to an object that is given to whoever needs it (a constructor argument),
    not to a module, except the process-wide state named in PROCESS_WIDE_STATE."""
    assert registry_offenders() == []


def _top_level() -> list[str]:
    """Top-level modules and packages of the core (without the ``.py``)."""
    return sorted(
        p.stem if p.is_file() else p.name
        for p in CORE.iterdir()
        if (p.suffix == ".py" and p.is_file()) or (p / "__init__.py").is_file()
    )


def shape_offenders() -> list[str]:
    """Item 2's shape: few top-level modules, families as packages, no compatibility paths."""
    modules = [p for p in CORE.glob("*.py") if p.stem not in {"__init__", "__main__", "_version"}]
    offenders = []
    if len(modules) > MAX_TOP_LEVEL_MODULES:
        offenders.append(f"{len(modules)} top-level modules (at most {MAX_TOP_LEVEL_MODULES})")
    names = _top_level()
    prefixes = [n.split("_")[0] for n in names if "_" in n.strip("_")]
    for name in names:
        prefix = name.split("_")[0]
        if "_" in name.strip("_") and (prefix in names or prefixes.count(prefix) > 1):
            offenders.append(f"{name} is in the family {prefix}_*: make it a package")
    offenders += [f"compatibility module {n} still exists" for n in COMPATIBILITY_MODULES if n in names]
    return offenders


def test_packages_by_concept() -> None:
    """At most 14 top-level modules, no prefix families (transaction_*, reads_*, engine_*), no
    compatibility modules (issue 24 item 2)."""
    assert shape_offenders() == []


def _public_packages() -> list[Path]:
    """The packages that curate a public surface (an ``__all__`` in their ``__init__``)."""
    return [
        p
        for p in sorted(CORE.rglob("__init__.py"))
        if any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
            for n in _tree(p).body
        )
    ]


def duplicate_public_names() -> dict[str, set[str]]:
    """Names that the public packages export for two different objects."""
    exported: dict[str, set[str]] = {}
    for path in _public_packages():
        package = _module_name(path)
        tree = _tree(path)
        names = next(
            ast.literal_eval(n.value)
            for n in tree.body
            if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
        )
        for name in names:
            exported.setdefault(name, set()).add(_defined(f"{package}.{name}"))
    return {name: found for name, found in exported.items() if len(found) > 1}


def test_one_public_name_per_concept() -> None:
    """Two objects exported under one name (two ``Reason``s) make every import a guess."""
    assert duplicate_public_names() == {}


def _gui() -> Path:
    return CORE.parent.parent / "gui" / "postproject_gui"


def front_end_storage_imports() -> list[str]:
    """Front-end modules (cli, executor, the GUI) that import ``postproject.storage``."""
    paths = [p for front in FRONT_ENDS for p in sorted((CORE / front).rglob("*.py"))]
    paths += sorted(_gui().rglob("*.py"))
    offenders = []
    for path in paths:
        for node in ast.walk(_tree(path)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if any(t == "postproject.storage" or t.startswith("postproject.storage.") for t in targets):
                offenders.append(f"{path.relative_to(CORE.parent.parent)}:{node.lineno}")
    return offenders


def test_front_ends_never_import_storage() -> None:
    """Front ends reach a production through the public API and ``postproject.locations``."""
    assert front_end_storage_imports() == []


def test_the_import_contracts_hold() -> None:
    """The import-linter contracts of pyproject.toml, run on the tree under test."""
    root = CORE.parent.parent
    linter = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CORE.parent), str(_gui().parent)])}
    done = subprocess.run(
        [str(linter), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout, done.stdout[-4000:]
