"""Lease-token files: the only way a lease token enters or leaves the CLI.

Writing (``job claim``): the file is reserved with an exclusive create (mode 0600) before the
claim commits, so an existing file is never overwritten and a refused path costs no revision;
the token is written and fsynced after the commit; if delivery fails the file is removed and
the error carries the commit receipt (the claim stays durable: recover by expiry or
``job cancel``). Reading: a file or ``-`` (stdin), at most 118 bytes, exactly one trailing
``\\n`` or ``\\r\\n`` removed, validated before any production is opened. Token text never
appears in output, errors or arguments.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

from postproject.base.leases import parse_token
from postproject.model.errors import AlreadyExistsError, InvalidArgumentError, IoError
from postproject.model.ids import JobId

MAX_TOKEN_BYTES = 118
_TOKENISH = re.compile(r"ppl1:\S*")
INVALID = "invalid scoped job lease token"


def redact(text: str) -> str:
    """``text`` with anything that looks like a lease token replaced."""
    return _TOKENISH.sub("<lease token>", text)


class DeliveryError(IoError):
    """The claim committed but its token could not be written to the token file."""

    def __init__(self, message: str, receipt: dict[str, Any]) -> None:
        super().__init__(message)
        self.receipt = receipt


class ReservedTokenFile:
    """A token file created exclusively (mode 0600) and owned until the token is delivered.

    Use as a context manager: leaving it without :meth:`deliver` succeeding removes the file.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._delivered = False

    def __enter__(self) -> ReservedTokenFile:
        flags = (
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        )
        try:
            self._fd = os.open(self._path, flags, 0o600)
        except FileExistsError:
            raise AlreadyExistsError(
                f"lease token file {self._path} already exists; it is never overwritten (choose a new path)"
            ) from None
        except OSError as exc:
            raise IoError(f"cannot create lease token file {self._path}: {exc.strerror}") from None
        os.fchmod(self._fd, 0o600)
        info = os.fstat(self._fd)
        self._identity = (info.st_dev, info.st_ino)
        return self

    def deliver(self, token: str, receipt: dict[str, Any]) -> None:
        """Write and fsync the token (no trailing newline); on failure remove the file."""
        assert self._fd is not None
        try:
            data = token.encode("ascii")
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(0, "short write")
            os.fsync(self._fd)
            self._close()
            _sync_directory(self._path.parent)
        except OSError as exc:
            self._remove()
            raise DeliveryError(
                f"the claim committed but its lease token could not be written to {self._path} "
                f"({exc.strerror or exc}); the file was removed. Cancel the job or let the lease expire.",
                receipt,
            ) from None
        self._delivered = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._delivered:
            self._remove()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _remove(self) -> None:
        """Remove the file, but only if it is still the one this object created."""
        self._close()
        try:
            info = os.stat(self._path, follow_symlinks=False)
            if (info.st_dev, info.st_ino) == self._identity:
                os.unlink(self._path)
        except OSError:
            pass


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_token(source: str, stdin: BinaryIO, job_id: JobId) -> str:
    """The token from ``source`` (a path or ``-``), checked to be well formed and for ``job_id``."""
    raw = _read_bounded(source, stdin)
    if raw.endswith(b"\r\n"):
        raw = raw[:-2]
    elif raw.endswith(b"\n"):
        raw = raw[:-1]
    try:
        token = raw.decode("ascii")
    except UnicodeDecodeError:
        raise InvalidArgumentError(INVALID) from None
    try:
        _, token_job, _ = parse_token(token)
    except InvalidArgumentError:
        raise InvalidArgumentError(INVALID) from None
    if token_job != job_id:
        raise InvalidArgumentError(f"lease token belongs to another job (not {job_id})")
    return token


def _read_regular_file(source: str) -> bytes:
    """At most ``MAX_TOKEN_BYTES + 1`` bytes of a regular file. It is opened without waiting
    (a FIFO with no writer, a device) and its type checked on the open descriptor, so
    nothing but a regular file is ever read (and nothing can make this hang)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(source, flags)
    except OSError as exc:
        raise IoError(f"cannot read lease token file {source}: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidArgumentError(f"lease token file {source} is not a regular file")
        return os.read(fd, MAX_TOKEN_BYTES + 1)
    except OSError as exc:
        raise IoError(f"cannot read lease token file {source}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _read_bounded(source: str, stdin: BinaryIO) -> bytes:
    if source == "-":
        data = stdin.read(MAX_TOKEN_BYTES + 1)
    else:
        if _TOKENISH.match(source):
            raise InvalidArgumentError("--lease-token-file takes a file path or '-', never the token itself")
        data = _read_regular_file(source)
    if len(data) > MAX_TOKEN_BYTES:
        raise InvalidArgumentError(INVALID)
    return data
