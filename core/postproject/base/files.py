"""File facts: size, modification time and a streaming content fingerprint."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
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
    before a byte is read, so only a regular file is ever hashed. A small file (a worker's
    every output, most often) is read with the descriptor alone: one ``read`` asking for one
    byte more than its size; a short read of a regular file is its end, and a file that grew
    meanwhile is read on to its end.
    """
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError
            if not stat.S_ISREG(info.st_mode):
                raise InvalidArgumentError(
                    f"representation path {path} is not a regular file ({_kind(info.st_mode)})"
                )
            if info.st_size < _CHUNK:
                digest = hashlib.new(ALGORITHM)
                want = info.st_size + 1
                while chunk := os.read(fd, want):
                    digest.update(chunk)
                    if len(chunk) < want:
                        break  # (a regular file reads short only at its end)
                    want = _CHUNK
            else:
                with open(fd, "rb", closefd=False) as handle:
                    digest = hashlib.file_digest(handle, ALGORITHM)
        finally:
            os.close(fd)
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


READ_TIMEOUT = 5.0  # seconds: a file that takes longer (a hung network mount) is given up


def read_regular(
    path: Path, limit: int, *, offset: int | None = None, timeout: float = READ_TIMEOUT
) -> tuple[bytes, int]:
    """At most ``limit`` bytes of the regular file at ``path``, from ``offset`` (None: its last
    ``limit`` bytes), and the file's size: for files a production names but does not own
    (an attempt's log).

    Never hangs, exhausts memory or reads a device: the file is opened without waiting
    (``O_NONBLOCK``) and its type checked on the open descriptor before a byte is read (a
    FIFO, ``/dev/zero`` or a directory is ``invalid_argument``); at most ``limit`` bytes are
    read; a read that has not finished after ``timeout`` seconds is ``io`` (the reading
    thread is left to finish on its own).
    """
    result: list[tuple[bytes, int] | BaseException] = []

    def read() -> None:
        try:
            fd = os.open(path, _FLAGS)
            with open(fd, "rb", closefd=True) as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise InvalidArgumentError(
                        f"{path} is not a regular file ({_kind(info.st_mode)}); not read"
                    )
                start = max(0, info.st_size - limit) if offset is None else offset
                handle.seek(start)
                result.append((handle.read(limit), info.st_size))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            result.append(exc)

    reader = threading.Thread(target=read, name="pp-bounded-read", daemon=True)
    reader.start()
    reader.join(timeout)
    if not result:
        raise IoError(f"reading {path} took longer than {timeout:g} s; given up")
    outcome = result[0]
    if isinstance(outcome, InvalidArgumentError):
        raise outcome
    if isinstance(outcome, OSError):
        raise IoError(f"cannot read {path}: {outcome.strerror or outcome}") from None
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


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
