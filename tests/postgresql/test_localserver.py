"""The throwaway server: unprivileged, on loopback, and gone after a stop, a signal or a crash."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from postproject.model.errors import StorageError
from postproject.storage.postgresql.localserver import (
    ROLE,
    SERVER_ACCOUNT,
    THROWAWAY_SCRAM_ITERATIONS,
    LocalServer,
    reap_stale_servers,
)

# A process that starts a server and waits to be stopped (SIGTERM and SIGINT must both clean up).
SERVER_PROCESS = """
import sys, time
from postproject.model.errors import StorageError
from postproject.storage.postgresql.localserver import LocalServer, interrupt_on_sigterm
with interrupt_on_sigterm(), LocalServer() as server:
    print(server.directory, server.port, flush=True)
    time.sleep(300)
"""


def accepts(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left to an init that never reaps does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def postmaster_pid(data: Path) -> int:
    return int((data / "postmaster.pid").read_text().split()[0])


def test_the_server_runs_unprivileged_on_loopback_with_a_scram_role(postgres_server: LocalServer) -> None:
    with psycopg.connect(postgres_server.uri()) as conn:
        user, superuser, address = conn.execute(
            "SELECT current_user, rolsuper, host(inet_server_addr()) FROM pg_roles WHERE rolname = current_user"
        ).fetchone()  # type: ignore[misc]
    assert (user, superuser, address) == (ROLE, False, "127.0.0.1")
    admin = postgres_server.admin()
    settings = dict(admin.execute("SELECT name, setting FROM pg_settings").fetchall())
    assert settings["listen_addresses"] == "127.0.0.1"
    assert settings["password_encryption"] == "scram-sha-256"
    assert settings["fsync"] == "off"  # throwaway: tests do not need durability
    assert Path(settings["data_directory"]) == postgres_server.data
    assert (postgres_server.socket_dir / f".s.PGSQL.{postgres_server.port}").is_socket()
    owner = postgres_server.data.stat().st_uid
    if os.geteuid() == 0:
        import pwd

        assert owner == pwd.getpwnam(SERVER_ACCOUNT).pw_uid != 0
        assert str(postgres_server.directory).startswith(tempfile.gettempdir())
    else:
        assert owner == os.geteuid()


def test_a_throwaway_servers_role_takes_its_password_only_and_few_scram_rounds(
    postgres_server: LocalServer,
) -> None:
    """A throwaway server's role has a verifier of its own making (few PBKDF2 rounds: they run
    at every connection, on both sides): PostgreSQL reads it as SCRAM, takes the password and
    refuses any other."""
    admin = postgres_server.admin()
    (stored,) = admin.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (ROLE,)).fetchone()  # type: ignore[misc]
    assert stored.startswith(f"SCRAM-SHA-256${THROWAWAY_SCRAM_ITERATIONS}:")
    uri = postgres_server.uri().split("?")[0]
    with psycopg.connect(uri, password=postgres_server.password) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (ROLE,)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(uri, password=postgres_server.password + "x")


def test_a_kept_directory_survives_stop_and_is_reused() -> None:
    # Under the system's temporary folder, which the server's account can reach (tmp_path cannot).
    directory = Path(tempfile.mkdtemp(prefix="postproject-kept-test-")) / "pgdata"
    directory.parent.chmod(0o755)
    try:
        server = LocalServer(directory, durable=True).start()
        try:
            assert server.admin().execute("SHOW fsync").fetchone() == ("on",)
            server.create_database("kept")
            first_password, port = server.password, server.port
        finally:
            server.stop()
        assert (directory / "data" / "PG_VERSION").exists()
        assert not (directory / "data" / "postmaster.pid").exists()
        assert not accepts(port)
        with LocalServer(directory) as again:
            assert again.password != first_password
            with psycopg.connect(again.uri("kept")) as conn:
                assert conn.execute("SELECT current_database()").fetchone() == ("kept",)
    finally:
        shutil.rmtree(directory.parent, ignore_errors=True)


def test_a_wrapped_server_runs_under_the_given_command() -> None:
    """``wrap`` (benchmarks run the server under callgrind this way): the server program runs
    under the command given, and serves as usual."""
    with LocalServer(wrap=("env", "POSTPROJECT_WRAPPED=yes")) as server:
        with psycopg.connect(server.create_database("wrapped")) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("wrapped",)
        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
        try:
            environment = Path(f"/proc/{postmaster}/environ").read_bytes().split(b"\0")
        except OSError:
            pytest.skip("the server's environment cannot be read here")
        assert b"POSTPROJECT_WRAPPED=yes" in environment


def start_server_process(tmpdir: Path | None = None) -> tuple[subprocess.Popen[str], Path, int]:
    """A process owning a server, in ``tmpdir`` (its temporary folder) when given."""
    env = dict(os.environ, TMPDIR=str(tmpdir)) if tmpdir is not None else None
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER_PROCESS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None and process.stderr is not None
    line = process.stdout.readline().split()
    if not line:
        process.wait()
        pytest.fail(f"the server process failed: {process.stderr.read()}")
    return process, Path(line[0]), int(line[1])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_owner_stops_its_server_and_removes_it(sig: signal.Signals) -> None:
    process, directory, port = start_server_process()
    with process:
        pid = postmaster_pid(directory / "data")
        assert accepts(port) and alive(pid)
        process.send_signal(sig)
        process.wait(timeout=60)
    assert not directory.exists()
    assert not accepts(port)
    assert not alive(pid)


def test_a_killed_owners_server_is_reaped_by_the_next_one() -> None:
    # In a temporary folder of its own: a server another test process starts meanwhile (pytest-xdist)
    # reaps orphans in the shared one, and would take this test's orphan from under it.
    tmpdir = Path(tempfile.mkdtemp(prefix="postproject-reap-test-"))
    tmpdir.chmod(0o755)  # the server's account must reach it
    try:
        process, directory, port = start_server_process(tmpdir)
        with process:
            process.kill()  # SIGKILL: no clean-up runs
        pid = postmaster_pid(directory / "data")
        assert accepts(port) and alive(pid), "the orphaned server still runs"
        assert directory in reap_stale_servers(tmpdir)
        assert not directory.exists()
        assert not accepts(port)
        assert not alive(pid)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_a_directory_the_server_account_cannot_reach_is_a_clear_error() -> None:
    if os.geteuid() != 0:
        pytest.skip("only root hands the server to another account")
    private = Path(tempfile.mkdtemp(prefix="postproject-private-test-"))  # 0700, root's
    try:
        with pytest.raises(StorageError) as raised:
            LocalServer(private / "pgdata").start()
        assert raised.value.reason == "server_failed"
        assert SERVER_ACCOUNT in raised.value.message and str(private) in raised.value.message
        assert not (private / "pgdata" / "data").exists()
    finally:
        shutil.rmtree(private)


def test_reaping_leaves_live_servers_alone(postgres_server: LocalServer) -> None:
    reap_stale_servers()
    assert postgres_server.directory is not None and postgres_server.directory.exists()
    assert accepts(postgres_server.port)


@pytest.mark.parametrize(("ci", "outcome"), [("", "1 skipped"), ("true", "1 error")])
def test_without_server_binaries_tests_skip_except_in_ci(ci: str, outcome: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"POSTPROJECT_PG_BINDIR": "/nonexistent", "CI": ci}
    test = f"{Path(__file__).resolve()}::test_reaping_leaves_live_servers_alone"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", test],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert outcome in result.stdout, result.stdout
    assert "no PostgreSQL server binaries" in result.stdout
