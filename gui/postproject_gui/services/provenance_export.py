"""W3C PROV files of a production's provenance (no Qt).

:func:`export_prov` opens the production read-only and writes PROV-JSON or PROV-N through
:mod:`postproject.knowledge.prov`; the service calls it on a reader thread (it reads the
database and writes a file).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from postproject import Production, RepresentationId
from postproject.knowledge import prov as pp_prov

ProvFormat = Literal["json", "provn"]
SUFFIXES: dict[ProvFormat, str] = {"json": ".json", "provn": ".provn"}


def export_prov(
    production_path: str | os.PathLike[str],
    rep_ids: Iterable[RepresentationId] | None,
    fmt: ProvFormat,
    out_path: str | os.PathLike[str],
) -> Path:
    """Write the provenance of ``rep_ids`` (their whole upstream lineage; None: everything)
    as PROV-JSON (``fmt="json"``) or PROV-N (``"provn"``) to ``out_path``; returns the path.

    The file is written next to its destination and renamed into place, so a failed export
    never leaves half a file. Raises the core's errors (``not_found``, ``unsupported``, ...).
    """
    if fmt not in SUFFIXES:
        raise ValueError(f"fmt must be 'json' or 'provn'; got {fmt!r}")
    out = Path(out_path)
    with Production.open(production_path, read_only=True) as production:
        document = pp_prov.export(production, list(rep_ids) if rep_ids is not None else None)
    text = pp_prov.serialize(document, fmt)
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(temporary).replace(out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out
