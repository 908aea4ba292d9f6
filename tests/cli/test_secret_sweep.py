"""No secret is ever printed: every command's human and JSON output, and the log lines the
commands write, swept for a planted database password and a planted API token (issue 28
item 2).

Every leaf command of the parser runs twice (text, then ``--json``) against a production
whose location carries the planted password (on PostgreSQL, as a real login role's password
in the URI), after an API token was created there; the commands that run until stopped
(``revisions follow``, ``serve``) run as real processes for a moment. A new command is swept
without touching this file; a new kind of secret is one line of :func:`planted_secrets`.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from postproject.cli.app import build_parser
from tests.cli.helpers import KIND, SCRIPT_DIR, Cli, script_env

PASSWORD = "Pl@nted/Sw33p?pw#1:x"  # every character a URI must encode, and a ':'
ROLE = "sweeper"


@dataclass(frozen=True)
class Secret:
    """A secret and the texts that would betray it (whole, encoded, or a telling part)."""

    kind: str
    texts: tuple[str, ...]


def planted_secrets(password: str | None, api_token: str) -> list[Secret]:
    """The secrets this sweep looks for: adding a kind of secret is adding one line here."""
    secrets = [Secret("API token", (api_token, api_token.partition("_")[2][:16]))]
    if password is not None:
        secrets.append(Secret("database password", (password, quote(password, safe=""), "Sw33p")))
    return secrets


def leaks(text: str, secrets: list[Secret]) -> list[str]:
    return [f"{s.kind} ({t!r})" for s in secrets for t in s.texts if t and t in text]


def leaf_commands() -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command of ``postproject`` (its words, its parser), from the parser itself."""

    def walk(
        parser: argparse.ArgumentParser, words: tuple[str, ...]
    ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield words, parser
            return
        for name, sub in subs[0].choices.items():
            yield from walk(sub, (*words, name))

    yield from walk(build_parser(), ())


# Commands that run until stopped: run as a process for a moment (extra arguments), then stopped.
LONG_RUNNING = {("revisions", "follow"): (), ("serve",): ("--listen", "127.0.0.1:{port}")}
# Arguments that keep a command short (in-process runs).
EXTRA: dict[tuple[str, ...], tuple[str, ...]] = {
    ("revisions", "wait"): ("--timeout", "0s"),
    ("clock", "reset"): ("--yes",),
    ("demo", "run"): ("--assets", "3", "--duration", "0.5", "--workers", "1"),
    ("demo", "create"): ("--assets", "3", "--duration", "0.5"),
    ("worker", "run"): ("--once",),
}


@dataclass
class SweepScene:
    location: str
    dir: Path
    asset: str
    original: str
    job: str
    media: Path
    token_file: Path
    api_token: str
    password: str | None

    def filler(self, dest: str, command: tuple[str, ...], run: int) -> str:
        """A plausible value for a positional argument, so each command gets past parsing."""
        fresh = self.dir / f"other-{'-'.join(command)}-{run}.pproj"
        values = {
            "job": self.job,
            "asset": self.asset,
            "output_asset": self.asset,
            "representation": self.original,
            "artifact": self.original,
            "activity": str(uuid.uuid4()),
            "target": f"asset:{self.asset}",
            "output_kind": "proxy",
            "path": str(self.media),
            "output_file": str(self.media),
            "name": "sweep-name",
            "vocabulary": "https://example.org/sweep/1",
            "property": "note",
            "value": "v",
            "sequence": "0",
            "priority": "5",
            "diagnostic": "boom",
            "destination": str(fresh),
            "other": str(fresh),
            "shell": "bash",
            "production": self.location,
        }
        if dest == "kind":
            return "original" if command[0] == "representation" else KIND
        return values[dest]

    def argv(self, command: tuple[str, ...], parser: argparse.ArgumentParser, run: int) -> list[str]:
        argv = list(command)
        for action in parser._actions:
            if not action.option_strings and action.dest != "help":
                argv.append(self.filler(action.dest, command, run))
            elif action.required:
                option = action.option_strings[0]
                value = {
                    "--tool-name": "Sweep",
                    "--lease-token-file": str(self.token_file),
                    "--kind": KIND,
                    "--role": "reader",
                    "--name": f"sweep-{run}",
                }[option]
                argv += [option, value]
        return argv + list(EXTRA.get(command, ()))


@pytest.fixture
def sweep_scene(
    cli: Cli,
    tmp_path: Path,
    production_location: Callable[[str], str],
    engine_kind: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[SweepScene]:
    password: str | None = None
    database = None
    location = production_location("sweep.pproj")
    if engine_kind == "postgresql":
        from psycopg import sql

        server = request.getfixturevalue("postgres_server")
        admin = server.admin()
        database = f"sweep_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(ROLE)))
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(ROLE), sql.Literal(PASSWORD))
        )
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(database), sql.Identifier(ROLE))
        )
        admin.execute(
            sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(
                sql.Identifier(database), sql.Identifier(ROLE)
            )
        )
        with _database_admin(server, database) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        monkeypatch.delenv("PGPASSWORD", raising=False)  # the password is in the URI alone
        location = f"postgresql://{ROLE}:{quote(PASSWORD, safe='')}@{server.host}:{server.port}/{database}?production=sweep"
        password = PASSWORD
    cli.json("init", location)
    media = tmp_path / "media" / "A001.mov"
    media.parent.mkdir()
    media.write_bytes(b"original essence")
    cli.json("media-root", "add", location, "media", str(media.parent))
    asset = cli.json("asset", "create", location, "--name", "A001")["id"]
    original = cli.json("representation", "add", location, asset, "original", str(media))["id"]
    job = cli.json("job", "request", location, KIND, asset, "proxy", "--input", original)["id"]
    token_file = tmp_path / "lease.token"
    cli.json("job", "claim", location, job, "--tool-name", "Sweep", "--lease-token-file", str(token_file))
    created = cli("--json", "api-token", "create", location, "--role", "supervisor", "--name", "planted")
    assert created.code == 0, created
    return SweepScene(
        location, tmp_path, asset, original, job, media, token_file, created.json["token"], password
    )


def _database_admin(server: object, database: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(
        host=str(server.socket_dir),
        port=server.port,
        user="postgres",
        dbname=database,
        autocommit=True,  # type: ignore[attr-defined]
    )


def _drop(server: object, database: str) -> None:
    from psycopg import sql

    server.drop_database(database)  # type: ignore[attr-defined]
    server.admin().execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(ROLE)))  # type: ignore[attr-defined]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_no_command_prints_a_password_or_an_api_token(
    sweep_scene: SweepScene, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = sweep_scene
    secrets = planted_secrets(scene.password, scene.api_token)
    monkeypatch.setenv("POSTPROJECT_PRODUCTION", scene.location)  # config show's value
    monkeypatch.setenv("POSTPROJECT_DEMO_MONITOR_CMD", "true")
    monkeypatch.chdir(scene.dir)  # demo media for a URI goes to ./NAME-media
    found: list[str] = []
    runs = 0
    for command, parser in leaf_commands():
        if command in LONG_RUNNING:
            continue
        for mode in ((), ("--json",)):
            runs += 1
            argv = [*mode, *scene.argv(command, parser, runs)]
            outcome = cli(*argv)
            for where, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
                found += [
                    f"{' '.join(command)} {' '.join(mode)} {where}: {leak}" for leak in leaks(text, secrets)
                ]
            assert outcome.code != 9, (command, mode, outcome)
    for command, extra in LONG_RUNNING.items():
        parser = dict(leaf_commands())[command]
        argv = [*scene.argv(command, parser, runs), *(e.format(port=_free_port()) for e in extra)]
        for mode in ((), ("--json",)):
            text = _run_for_a_moment([*mode, *argv], scene.dir)
            found += [f"{' '.join(command)} {' '.join(mode)}: {leak}" for leak in leaks(text, secrets)]
    assert runs >= 100
    assert found == []


def _run_for_a_moment(argv: list[str], cwd: Path, seconds: float = 3.0) -> str:
    """Run ``postproject ARGV`` as a process, stop it with SIGTERM after ``seconds``, and
    return everything it wrote."""
    env = script_env()
    process = subprocess.Popen(
        [str(SCRIPT_DIR / "postproject"), *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    time.sleep(seconds)
    process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out
