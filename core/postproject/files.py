"""File facts: size, modification time and a streaming content fingerprint."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from postproject.errors import InvalidArgumentError, IoError
from postproject.model.assets import Fingerprint

ALGORITHM = "sha256"
ALGORITHM_VERSION = 1
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What storage records about a representation's file."""

    size: int
    mtime: int  # Unix microseconds
    fingerprint: Fingerprint


def read_facts(path: Path) -> FileFacts:
    """Stat and hash one regular file (io error if unreadable, invalid_argument if not a file)."""
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InvalidArgumentError(f"representation path {path} is not a regular file")
            digest = hashlib.file_digest(handle, ALGORITHM)
    except FileNotFoundError:
        raise IoError(f"representation file {path} does not exist") from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"representation path {path} is a directory, not a file") from None
    except OSError as exc:
        raise IoError(f"cannot read representation file {path}: {exc.strerror}") from exc
    return FileFacts(
        size=info.st_size,
        mtime=info.st_mtime_ns // 1000,
        fingerprint=Fingerprint(ALGORITHM, ALGORITHM_VERSION, digest.digest()),
    )
