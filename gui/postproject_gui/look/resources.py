"""Find the data files in ``resources/`` (icons, themes) at run time.

The wheel force-includes the repository's ``resources/`` as ``postproject_gui/resources``;
a checkout (or an editable install) has it two levels above the ``postproject_gui`` package.
Nothing is compiled into Python modules.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # postproject_gui (this module is in look/)


@cache
def root() -> Path:
    """The resources directory (FileNotFoundError when neither location has one)."""
    for candidate in (_PACKAGE / "resources", _PACKAGE.parents[1] / "resources"):
        if (candidate / "themes").is_dir() and (candidate / "icons").is_dir():
            return candidate
    raise FileNotFoundError(f"no resources/ with themes/ and icons/ next to {_PACKAGE}")


def path(*parts: str) -> Path:
    """A file under the resources directory."""
    found = root().joinpath(*parts)
    if not found.is_file():
        raise FileNotFoundError(f"missing resource {found}")
    return found


def text(*parts: str) -> str:
    return path(*parts).read_text(encoding="utf-8")
