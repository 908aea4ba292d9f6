"""A production's location as the monitor handles it: a ``.pproj`` path or a ``postgresql://``
(``postgres://``) URI, always a ``str`` (a :class:`~pathlib.Path` would fold the URI's ``//``).

What the window shows of a URI (title, status bar, recent productions, command lines,
snapshot JSON) never holds its password: :func:`shown` is the core's redaction
(``Production.location``). The password itself comes from ``PGPASSWORD`` or a passfile, or
from the URI given on the command line, which is used to connect but never displayed or stored.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from postproject.locations import display_location, is_location_uri, netfs


def of(value: str | os.PathLike[str]) -> str:
    """``value`` as a location: a URI unchanged, a path as its text (``~`` expanded)."""
    text = os.fspath(value)
    return text if is_location_uri(text) else str(Path(text).expanduser())


def is_database(location: str) -> bool:
    """Whether the production lives in a database (a URI), not in a file."""
    return is_location_uri(location)


def shown(location: str) -> str:
    """The location as the window shows it: a path as given, a URI without its password."""
    return display_location(location)


def name(location: str) -> str:
    """A short name: the file's name, or ``PRODUCTION on HOST/DATABASE`` for a URI."""
    if not is_database(location):
        return Path(location).name
    parts = urlsplit(shown(location))
    host = parts.netloc.rpartition("@")[2]
    database = parts.path.strip("/")
    return f"{stem(location)} on {host}/{database}" if database else f"{stem(location)} on {host}"


def title(location: str) -> str:
    """What the window title and the status bar name: the file's name, or the whole URI
    without its password (which host, database and production the window shows)."""
    return shown(location) if is_database(location) else Path(location).name


def remembered(location: str) -> str:
    """What the recent list keeps: an absolute path, or the URI without its password."""
    return shown(location) if is_database(location) else str(Path(location).resolve())


def beside(location: str, file_name: str) -> Path:
    """Where a file made from this production goes by default: next to the production file,
    or in the home folder for a production in a database."""
    return Path.home() / file_name if is_database(location) else Path(location).with_name(file_name)


def stem(location: str) -> str:
    """A file-name stem for exports: the file's stem, or the production's schema name."""
    if not is_database(location):
        return Path(location).stem
    query = shown(location).partition("?")[2]
    names = [v for k, _, v in (p.partition("=") for p in query.split("&")) if k == "production"]
    return names[-1] if names else "production"


STALE_VIEW = (
    "Read-only view that may be behind: this production's write-ahead log cannot be read here "
    "(a read-only place without its -shm file); newer changes may be missing"
)


def network_warning(location: str) -> str | None:
    """The warning for a production file on a network filesystem (never for a database)."""
    return None if is_database(location) else netfs.network_warning(location)
