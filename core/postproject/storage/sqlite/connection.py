"""SQLite connections: pragmas, schema checks and a fair write lock.

Writers take the lock with ``BEGIN IMMEDIATE`` and, instead of SQLite's busy handler (which
is unfair: a waiter can sleep 100 ms while others win), retry with short jittered sleeps
until a deadline; a lock not obtained in time is a ``storage`` error with reason ``busy``.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import secrets
import sqlite3
from pathlib import Path

from postproject.model import clock
from postproject.model.errors import AlreadyExistsError, IoError, NotFoundError, Reason, StorageError
from postproject.storage.sql import versions
from postproject.storage.sqlite import schema
from postproject.storage.sqlite.errors import is_busy, translate, translated

APPLICATION_ID = 0x50505231  # "PPR1"
log = logging.getLogger(__name__)
Connection = sqlite3.Connection  # for the API layer, which never imports the driver itself
READ_BUSY_TIMEOUT_MS = 5000
JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024  # bytes of WAL kept after a checkpoint
TRUNCATE_EVERY = 2000  # commits between the writer's truncating checkpoint attempts
# The WAL's bound: every WAL_CHECK_EVERY commits the writer looks at the WAL's size (one
# stat) and past WAL_BOUND checkpoints and truncates it, waiting up to CHECKPOINT_WAIT_MS for
# the readers' current read transactions to end (polls are short; readers that start
# meanwhile read the checkpointed file, not the WAL). With no wait it lost to any reader
# mid-poll, and readers that overlap grew the WAL without bound (3.5 GB in 45 s).
WAL_BOUND = 64 * 1024 * 1024
WAL_CHECK_EVERY = 64
CHECKPOINT_WAIT_MS = 40
# Waiting for the write lock: jittered sleeps of 20-200 µs (the kernel's timer slack adds
# ~50 µs), so a released lock is taken again within ~0.1 ms; after ~300 tries (~50 ms, a long
# hold) waiters back off to sleeps of up to 5 ms. With 50-500 µs, four local workers often
# waited on a free lock: S4 (W=4 / W=1) went from 0.66x to 0.97x in paired drains (README).
LOCK_RETRY_SLEEP = (0.00002, 0.0002)
LOCK_WARNING_MIN = 1.0  # s: a wait for the lock is worth a warning past half of a timeout this long
LOCK_RETRY_BACKOFF_AFTER = 300
LOCK_RETRY_BACKOFF_SLEEP = 0.005
# What os.link raises where a filesystem has no hard links (FAT, exFAT, some network shares).
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK})


def create_file(path: Path, production_id: bytes, created_at: int) -> sqlite3.Connection:
    """Create a new production file (never over an existing one) and initialise its schema.

    The file is built under a temporary name beside ``path`` and linked into place once its
    schema is committed, so nobody ever opens a production that is still being created: there
    is none at ``path``, or a whole one (a reader used to find an empty schema, "version 0").
    """
    if os.path.lexists(path):
        raise AlreadyExistsError(f"a file already exists at {path}")
    building = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.creating")
    try:
        fd = os.open(building, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
    except OSError as exc:
        raise IoError(f"cannot create production {path}: {exc.strerror}") from exc
    os.close(fd)
    try:
        conn: sqlite3.Connection | None = None
        busy = 1
        try:
            with translated(path):
                conn = _connect(building, "rwc")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute("BEGIN IMMEDIATE")
                schema.migrate(conn, 0)
                conn.execute(
                    "INSERT INTO production (singleton, id, created_at, cursor_key) VALUES (1, ?, ?, ?)",
                    (production_id, created_at, os.urandom(32)),
                )
                conn.execute("COMMIT")
                # Everything into the file itself before it gets its name: the WAL stays behind.
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            if conn is not None:
                conn.close()
        wal = Path(f"{building}-wal")
        if busy or (wal.exists() and wal.stat().st_size):
            raise StorageError(f"cannot create production {path}: its new file was not fully written")
        _put_in_place(building, path)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{building}{suffix}").unlink(missing_ok=True)
    with translated(path):
        return _connect(path, "rw")


def _put_in_place(building: Path, path: Path) -> None:
    """Give the finished file its name: a hard link, which never replaces a file that appeared
    at ``path`` meanwhile; on a filesystem without hard links, a rename after a last check."""
    try:
        os.link(building, path)
        return
    except FileExistsError:
        raise AlreadyExistsError(f"a file already exists at {path}") from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise IoError(f"cannot create production {path}: {exc.strerror}") from exc
    if os.path.lexists(path):
        raise AlreadyExistsError(f"a file already exists at {path}")
    try:
        os.rename(building, path)
    except OSError as exc:
        raise IoError(f"cannot create production {path}: {exc.strerror}") from exc


def open_file(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """Open an existing production, checking that it is one and migrating a writable one."""
    return open_checked(path, read_only=read_only)[0]


def open_checked(path: Path, *, read_only: bool) -> tuple[sqlite3.Connection, bool]:
    """:func:`open_file`, and whether the view may be behind the production (``possibly_stale``).

    A read-only open where this process cannot create the WAL's side files (a read-only
    mount, a directory it may not write) reads the WAL through the existing ``-shm`` when
    there is one (SQLite reads a WAL with read-only side files); when there is a ``-wal`` but
    no usable ``-shm`` (a copy of a live production without it), the file is read as
    immutable, which ignores the WAL: that view may miss committed revisions, and says so.
    """
    if not path.exists():
        raise NotFoundError(f"no production at {path}")
    if not path.is_file():
        raise StorageError(f"{path} is not a production file", reason=Reason.NOT_A_PRODUCTION)
    modes = ["ro" if read_only else "rw"]
    if read_only and not _writable_beside(path):
        wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
        has_wal = _size(wal) > 0
        # without a WAL the immutable read is exact; with one, read it through its -shm if we can
        modes = ["ro", "ro&immutable=1"] if has_wal and os.access(shm, os.R_OK) else ["ro&immutable=1"]
    for mode in modes:
        last = mode == modes[-1]
        with translated(path):
            try:
                conn = _connect(path, mode)
            except sqlite3.Error:
                if last:
                    raise
                continue
            try:
                _check(conn, path, read_only=read_only)
            except sqlite3.Error:
                conn.close()
                if last:
                    raise
                continue
            except BaseException:
                conn.close()
                raise
        return conn, mode.endswith("immutable=1") and _size(Path(f"{path}-wal")) > 0
    raise AssertionError("unreachable")  # pragma: no cover


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _writable_beside(path: Path) -> bool:
    """Can this process create the WAL's side files next to ``path`` (or use existing ones)?"""
    shm = Path(f"{path}-shm")
    if shm.exists():
        return os.access(shm, os.R_OK | os.W_OK)
    return os.access(path.parent, os.W_OK | os.X_OK)


def _connect(path: Path, mode: str) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {READ_BUSY_TIMEOUT_MS}")
    if not mode.startswith("ro"):
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _check(conn: sqlite3.Connection, path: Path, *, read_only: bool) -> None:
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        error = translate(exc, path)
        error.reason = error.reason or Reason.CORRUPT
        raise error from exc
    if application_id != APPLICATION_ID:
        raise StorageError(f"{path} is not a PostProject production", reason=Reason.NOT_A_PRODUCTION)
    # Refused before anything is written: an open that fails leaves the file as it was.
    versions.check(str(path), version, schema.MIGRATIONS.latest, read_only=read_only)
    if version < schema.MIGRATIONS.latest:
        begin_immediate(conn, path, timeout=30.0)
        try:
            # Another process may have migrated it while we waited for the lock: read again.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version < schema.MIGRATIONS.latest:
                schema.migrate(conn, version)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def begin_immediate(conn: sqlite3.Connection, path: Path, *, timeout: float) -> None:
    """Take the write lock fairly: jittered retries until ``timeout`` seconds have passed.

    Past half of ``timeout`` it logs a warning once: another program holds the lock that long
    (a worker's renewals wait up to its lease: a lock held longer than the lease loses the
    claim, and the warning comes while there is still time to see why).
    """
    start = clock.monotonic()
    deadline = start + timeout
    warn_at: float | None = start + timeout / 2
    waited = 0
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise translate(exc, path) from exc
            if clock.monotonic() >= deadline:
                raise StorageError(
                    f"production {path} is busy: the write lock was not obtained within {timeout:g} s",
                    reason=Reason.BUSY,
                ) from exc
        waited += 1
        now = clock.monotonic()
        if warn_at is not None and now >= warn_at and timeout >= LOCK_WARNING_MIN:
            warn_at = None
            log.warning(
                "waited %.1f s for the write lock of %s: another program holds it; this edit gives up after %g s",
                now - start,
                path,
                timeout,
                extra={"action": "lock_wait"},
            )
        # Short random sleeps keep waiters fair and the lock busy; back off under long holds.
        low, high = LOCK_RETRY_SLEEP
        clock.sleep(
            random.uniform(low, high if waited < LOCK_RETRY_BACKOFF_AFTER else LOCK_RETRY_BACKOFF_SLEEP)
        )


def truncate_wal(conn: sqlite3.Connection, *, wait_ms: int = 0) -> None:
    """Try to checkpoint the whole WAL and truncate it, waiting up to ``wait_ms`` for readers
    in a read transaction to end (best effort: a reader may hold one longer)."""
    try:
        if wait_ms:
            conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass  # busy: the next attempt, or journal_size_limit after a reset, will do it
    finally:
        if wait_ms:
            conn.execute("PRAGMA busy_timeout = 0")  # the writer's own busy handling again


def wal_size(path: Path) -> int:
    """The WAL's size in bytes (0 when there is none)."""
    try:
        return os.stat(f"{path}-wal").st_size
    except OSError:
        return 0


def set_writer_mode(conn: sqlite3.Connection) -> None:
    """Writers do their own busy handling (see module docstring) and keep the WAL bounded."""
    conn.execute("PRAGMA busy_timeout = 0")
    # After a checkpoint resets the WAL, truncate it to this size instead of keeping it at its
    # largest (followers holding read snapshots can make it grow between checkpoints).
    conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
    # Checkpoint every ~16 MB of WAL instead of ~4 MB: hot pages (counts, the newest leaves)
    # are copied back once per checkpoint rather than four times (+8-10% commits/s measured).
    conn.execute("PRAGMA wal_autocheckpoint = 4000")
