"""A throwaway PostgreSQL server from the system's binaries (tests, the demo, benchmarks).

::

    with LocalServer() as server:              # initdb + pg_ctl in /tmp/postproject-pg-*
        uri = server.create_database("scratch")  # postgresql://postproject:...@127.0.0.1:PORT/scratch
        ...
    # stopped, its directory removed

The server listens on 127.0.0.1 on a free port and on a unix socket in its own directory.
Connections over TCP authenticate with SCRAM as the role :data:`ROLE` (a random password
per server, not a superuser); the superuser :data:`ADMIN` connects only over the socket,
whose directory only the server's account (and root) can enter.

``initdb`` refuses to run as root, so as root every server command runs as the unprivileged
:data:`SERVER_ACCOUNT` through ``runuser``, in a directory owned by that account (pytest's
``tmp_path`` is private to root, so the default directory is under the system's temporary
folder). A server started here is stopped by :meth:`LocalServer.stop`, at interpreter exit,
and, when its owner was killed outright, by the next :class:`LocalServer` that starts.
Without ``durable=True`` the server skips fsync (tests); benchmarks and the demo keep the
default durability.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import hashlib
import hmac
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from postproject.model.errors import Reason, StorageError, UnsupportedError

if TYPE_CHECKING:
    import psycopg

MIN_MAJOR_VERSION = 14
SERVER_ACCOUNT = "postgres"  # runs the server when we are root
ADMIN = "postgres"  # the superuser initdb creates (unix socket only, trust)
ROLE = "postproject"  # the role clients use over TCP (SCRAM, not a superuser)
PREFIX = "postproject-pg-"  # directories of throwaway servers under the temporary folder
_BIN_DIRS = Path("/usr/lib/postgresql")  # Debian and Ubuntu: one bin/ per major version
_START_TIMEOUT = 60
_PORT_ATTEMPTS = 5


def find_bindir() -> Path | None:
    """The newest directory holding ``initdb``, ``pg_ctl`` and ``postgres``, or ``None``.

    ``POSTPROJECT_PG_BINDIR``, when set, is the only place looked at; otherwise Debian's
    ``/usr/lib/postgresql/<major>/bin``, ``pg_config --bindir`` and ``PATH``, in that order.
    """
    configured = os.environ.get("POSTPROJECT_PG_BINDIR")
    for directory in [Path(configured)] if configured else _usual_bindirs():
        if all((directory / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return directory
    return None


def _usual_bindirs() -> list[Path]:
    found = sorted(
        (p for p in _BIN_DIRS.glob("*/bin") if p.parent.name.isdigit()),
        key=lambda p: int(p.parent.name),
        reverse=True,
    )
    if pg_config := shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            answer = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=10
            )
            found.append(Path(answer.stdout.strip()))
    if initdb := shutil.which("initdb"):
        found.append(Path(initdb).parent)
    return found


def server_version(bindir: Path) -> tuple[int, str]:
    """The major version and the full version line of the server in ``bindir``."""
    line = subprocess.run(
        [str(bindir / "postgres"), "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()
    match = re.search(r"\b(\d+)(?:\.\d+)?", line)
    if match is None:
        raise StorageError(f"cannot read the PostgreSQL version from {line!r}", reason=Reason.SERVER_FAILED)
    return int(match.group(1)), line


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the caller retries on a race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalServer:
    """One PostgreSQL server in a directory of its own; see the module docstring.

    ``directory`` keeps the server's files there (created when missing, reused when it
    already holds a cluster, never removed); without it a fresh directory under the system's
    temporary folder is removed by :meth:`stop`. ``wrap``: a command the server program runs
    under, its arguments after it (a profiler, for benchmarks: ``("valgrind", "--tool=callgrind",
    ...)``).
    """

    def __init__(
        self, directory: Path | None = None, *, durable: bool = False, wrap: tuple[str, ...] = ()
    ) -> None:
        self.durable = durable
        self.wrap = wrap
        self.keep = directory is not None
        self.directory = directory.resolve() if directory is not None else None
        self.host = "127.0.0.1"
        self.port = 0
        self.password = ""
        self.bindir: Path | None = None
        self.version = ""
        self._admin: psycopg.Connection[Any] | None = None
        self._running = False

    # -- life cycle -------------------------------------------------------------------

    def start(self) -> LocalServer:
        """Initialise (once) and start the server; returns ``self``."""
        if self._running:
            return self
        self.bindir = find_bindir()
        if self.bindir is None:
            raise StorageError(
                "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found; install them "
                "(Debian/Ubuntu: apt-get install postgresql) or set POSTPROJECT_PG_BINDIR",
                reason=Reason.NO_SERVER_BINARIES,
            )
        major, self.version = server_version(self.bindir)
        if major < MIN_MAJOR_VERSION:
            raise UnsupportedError(f"PostgreSQL {MIN_MAJOR_VERSION} or newer is needed, found {self.version}")
        if self.directory is None:
            reap_stale_servers()
            self.directory = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.directory.mkdir(parents=True, exist_ok=True)
        _hand_over(self.directory)
        _check_reachable(self.directory)
        (self.directory / "owner").write_text(_process_identity(os.getpid()))
        atexit.register(self.stop)
        try:
            if not (self.data / "PG_VERSION").exists():
                self._initdb()
            elif (self.data / "postmaster.pid").exists():
                _shutdown(self.bindir, self.data)  # left running by an earlier owner of ``directory``
            self._start_on_free_port()
            self._running = True
            self._create_role()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server (fast shutdown, then immediate) and remove a throwaway directory."""
        atexit.unregister(self.stop)
        self._running = False
        if self._admin is not None:
            with contextlib.suppress(Exception):
                self._admin.close()
            self._admin = None
        if self.directory is None:
            return
        if self.bindir is not None and (self.data / "postmaster.pid").exists():
            _shutdown(self.bindir, self.data)
        if not self.keep:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- addresses ----------------------------------------------------------------------

    @property
    def data(self) -> Path:
        assert self.directory is not None, "the server has not been started"
        return self.directory / "data"

    @property
    def socket_dir(self) -> Path:
        assert self.directory is not None, "the server has not been started"
        return self.directory

    @property
    def log_path(self) -> Path:
        assert self.directory is not None, "the server has not been started"
        return self.directory / "server.log"

    def uri(
        self,
        dbname: str = "postgres",
        *,
        production: str | None = None,
        password: str | None = None,
        port: int | None = None,
    ) -> str:
        """A ``postgresql://`` URI for :data:`ROLE` over TCP (``password``/``port`` override, for tests)."""
        secret = self.password if password is None else password
        uri = f"postgresql://{ROLE}:{quote(secret, safe='')}@{self.host}:{port or self.port}/{quote(dbname)}"
        return uri if production is None else f"{uri}?production={quote(production)}"

    # -- databases ----------------------------------------------------------------------

    def admin(self) -> psycopg.Connection[Any]:
        """The superuser's autocommit connection over the unix socket (kept open)."""
        import psycopg

        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(
                host=str(self.socket_dir),
                port=self.port,
                user=ADMIN,
                dbname="postgres",
                autocommit=True,
                application_name="postproject-localserver",
            )
        return self._admin

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create database ``name`` owned by :data:`ROLE` (a copy of ``template``); return its URI."""
        from psycopg import sql

        statement = sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(ROLE))
        if template is not None:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        self.admin().execute(statement)
        return self.uri(name)

    def ensure_database(self, name: str) -> str:
        """Create database ``name`` (owned by :data:`ROLE`) unless it exists; return its URI."""
        found = self.admin().execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        return self.uri(name) if found is not None else self.create_database(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name`` if it exists, ending its sessions first."""
        from psycopg import sql

        self.admin().execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    # -- internals ----------------------------------------------------------------------

    def _initdb(self) -> None:
        assert self.bindir is not None
        self.data.mkdir(mode=0o700, exist_ok=True)
        _hand_over(self.data)
        options = (
            f"--username {ADMIN} --encoding UTF8 --locale C --auth-local trust --auth-host scram-sha-256"
        )
        _server_command(
            self.bindir / "initdb", "--pgdata", self.data, *options.split(), "--no-sync", what="initdb"
        )
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\ninclude_if_exists = 'postproject.conf'\n")

    def _start_on_free_port(self) -> None:
        assert self.bindir is not None
        for attempt in range(_PORT_ATTEMPTS):
            self.port = free_port()
            self._write_settings()
            offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            try:
                wait = ("--wait", "--timeout", str(_START_TIMEOUT), "--silent")
                start = (
                    self.bindir / "pg_ctl",
                    "start",
                    "--pgdata",
                    self.data,
                    "--log",
                    self.log_path,
                    *wait,
                    *(("-p", self._wrapped()) if self.wrap else ()),
                )
                _server_command(*start, what="pg_ctl start", log=self.log_path)
                return
            except StorageError:
                log = _read_tail(self.log_path, offset)
                if "could not bind" not in log or attempt == _PORT_ATTEMPTS - 1:
                    raise
                # Another process took the port between the probe and the bind: try another.

    def _wrapped(self) -> Path:
        """A script, beside the data folder, that runs the server program under :attr:`wrap`."""
        assert self.bindir is not None
        assert self.directory is not None
        script = self.directory / "postgres-wrapped"
        command = " ".join(shlex.quote(str(part)) for part in (*self.wrap, self.bindir / "postgres"))
        script.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        script.chmod(0o755)
        return script

    def _write_settings(self) -> None:
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.socket_dir),
            "max_connections": "200",
            "lc_messages": "C",
            "timezone": "UTC",
            "logging_collector": "off",
        }
        if not self.durable:
            settings |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        lines = [f"{name} = {_conf_string(value)}\n" for name, value in settings.items()]
        path = self.data / "postproject.conf"
        path.write_text("# Written by postproject's LocalServer at every start.\n" + "".join(lines))
        _hand_over(path)

    def _create_role(self) -> None:
        """(Re)create the client role with a fresh random password (kept in memory only)."""
        from psycopg import sql

        self.password = secrets.token_urlsafe(24)
        admin = self.admin()
        if self.durable:
            verifier = admin.pgconn.encrypt_password(self.password.encode(), ROLE.encode(), b"scram-sha-256")
        else:
            verifier = _throwaway_verifier(self.password).encode("ascii")
        role = sql.Identifier(ROLE)
        exists = admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone()
        verb = sql.SQL("ALTER ROLE {}" if exists else "CREATE ROLE {}").format(role)
        admin.execute(
            verb + sql.SQL(" LOGIN NOSUPERUSER PASSWORD {}").format(sql.Literal(verifier.decode("ascii")))
        )


THROWAWAY_SCRAM_ITERATIONS = 16


def _throwaway_verifier(password: str) -> str:
    """A SCRAM-SHA-256 verifier (RFC 5802, 7677; PostgreSQL's stored form) with few iterations,
    for a throwaway server's random password: a client and the server each run the iterations
    at every connection, and libpq's ``encrypt_password`` always uses 4,096 before PostgreSQL
    16 (about 3 ms of client CPU per connection; the test suite opens thousands). The password
    is random URL-safe ASCII, which SASLprep leaves as it is."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("ascii"), salt, THROWAWAY_SCRAM_ITERATIONS)
    stored_key = hashlib.sha256(hmac.digest(salted, b"Client Key", "sha256")).digest()
    server_key = hmac.digest(salted, b"Server Key", "sha256")
    encoded = [base64.b64encode(part).decode("ascii") for part in (salt, stored_key, server_key)]
    return f"SCRAM-SHA-256${THROWAWAY_SCRAM_ITERATIONS}:{encoded[0]}${encoded[1]}:{encoded[2]}"


def reap_stale_servers(root: Path | None = None) -> list[Path]:
    """Stop and remove throwaway servers whose owning process is gone; return their directories."""
    reaped: list[Path] = []
    bindir = find_bindir()
    for directory in Path(root or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            owner = (directory / "owner").read_text().split()
            pid = int(owner[0])
        except (OSError, ValueError, IndexError):
            continue  # still being set up, or not ours to judge
        if _process_identity(pid) == " ".join(owner):
            continue  # its owner is alive
        if bindir is not None and (directory / "data" / "postmaster.pid").exists():
            _shutdown(bindir, directory / "data")
        shutil.rmtree(directory, ignore_errors=True)
        reaped.append(directory)
    return reaped


@contextlib.contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt while inside, so ``finally`` blocks stop the server.

    Does nothing outside the main thread or when SIGTERM already has a handler.
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _server_ids() -> tuple[int, int] | None:
    """The uid and gid of :data:`SERVER_ACCOUNT` when we are root; ``None`` otherwise."""
    if not _as_root():
        return None
    import pwd

    try:
        account = pwd.getpwnam(SERVER_ACCOUNT)
    except KeyError:
        raise StorageError(
            f"running as root, the PostgreSQL server needs the unprivileged account "
            f"{SERVER_ACCOUNT!r}, which does not exist (the postgresql package creates it)",
            reason=Reason.SERVER_FAILED,
        ) from None
    return account.pw_uid, account.pw_gid


def _hand_over(path: Path) -> None:
    """Give ``path`` to the server's account when we are root (initdb refuses root)."""
    if (ids := _server_ids()) is not None:
        os.chown(path, *ids)


def _check_reachable(directory: Path) -> None:
    """Refuse a directory the server's account cannot write (a parent it may not enter)."""
    if _server_ids() is None:
        return
    try:
        _server_command("test", "-w", directory, "-a", "-x", directory, what="test")
    except StorageError:
        raise StorageError(
            f"the PostgreSQL server runs as the account {SERVER_ACCOUNT!r}, which cannot write {directory}: "
            "every folder above it must be searchable by that account (or use one under "
            f"{tempfile.gettempdir()})",
            reason=Reason.SERVER_FAILED,
        ) from None


def _server_command(*args: str | Path, what: str, log: Path | None = None) -> None:
    """Run a server program as the server's account, with a clean environment."""
    command = [str(a) for a in args]
    if _server_ids() is not None:
        runuser = shutil.which("runuser") or "/usr/sbin/runuser"
        command = [runuser, "-u", SERVER_ACCOUNT, "--", *command]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),  # a folder the server's account can enter
            start_new_session=True,  # a terminal's Ctrl-C reaches us, not the server
            timeout=_START_TIMEOUT + 30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StorageError(f"{what} failed: {exc}", reason=Reason.SERVER_FAILED) from exc
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        if log is not None:
            detail = f"{detail}\n{_read_tail(log, 0)}".strip()
        raise StorageError(f"{what} failed (exit {result.returncode}): {detail}", reason=Reason.SERVER_FAILED)


def _shutdown(bindir: Path, data: Path) -> None:
    """Stop the server on ``data``: a fast shutdown, or an immediate one if that fails."""
    for mode in ("fast", "immediate"):
        try:
            stop = (bindir / "pg_ctl", "stop", "--pgdata", data, "--mode", mode, "--wait", "--silent")
            _server_command(*stop, what="pg_ctl stop")
            return
        except StorageError:
            if not (data / "postmaster.pid").exists():
                return


def _process_identity(pid: int) -> str:
    """``"PID START"`` for a live process (START tells a reused PID apart), ``""`` if none."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return ""
    except PermissionError:
        pass  # alive, somebody else's
    start = ""
    with contextlib.suppress(OSError, IndexError):
        # Field 22 of /proc/PID/stat (after the parenthesised command name) is the start time.
        start = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    return f"{pid} {start}".strip() if sys.platform.startswith("linux") else str(pid)


def _conf_string(value: str) -> str:
    """A quoted string for postgresql.conf (a quote inside is doubled)."""
    return "'" + value.replace("'", "''") + "'"


def _read_tail(path: Path, offset: int, limit: int = 4000) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", "replace")[-limit:].strip()
    except OSError:
        return ""
