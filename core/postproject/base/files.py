"""File facts: size, modification time and a streaming content fingerprint."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from postproject.model.assets import Fingerprint
from postproject.model.errors import InvalidArgumentError, IoError

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
    """Stat and hash one regular file (io error if unreadable, invalid_argument if not a file).

    The file is opened without waiting (``O_NONBLOCK``: a FIFO with no writer or a device
    would otherwise block the open for ever) and its type is checked on the open descriptor
    before a byte is read, so only a regular file is ever hashed.
    """
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
        with open(fd, "rb", closefd=True) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InvalidArgumentError(
                    f"representation path {path} is not a regular file ({_kind(info.st_mode)})"
                )
            if info.st_size < _CHUNK:
                # a small file in one read (file_digest allocates a 256 KiB buffer per call);
                # read() still reads to the end, like file_digest, if the file grew meanwhile
                digest = hashlib.new(ALGORITHM, handle.read())
            else:
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


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a plain file"
