"""Exit codes and error reporting for each error category (acceptance check 61).

With ``--json`` an error is ``{"error": {"code", "message"}}`` on stdout (plus ``reason`` for a
refined case); a one-line human
message always goes to stderr; no traceback ever reaches the user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postproject.cli import app, jobs
from postproject.model.errors import ERROR_CLASSES, ErrorCode
from tests.cli.helpers import Cli, Outcome, Scene, script_env
from tests.engines import set_schema_version

Script = Callable[..., subprocess.CompletedProcess[str]]
ABSENT = "0190a000-0000-7000-8000-000000000000"


def assert_error(outcome: Outcome, code: str, status: int) -> None:
    assert outcome.code == status, outcome
    assert set(outcome.json) == {"error"}
    assert outcome.json["error"]["code"] == code
    assert set(outcome.json["error"]) - {"reason"} == {"code", "message"}
    assert outcome.json["error"]["message"]
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("postproject: error: ") and f"({code})" in lines[0]
    assert "Traceback" not in outcome.stderr


def test_invalid_argument_is_2(cli: Cli, scene: Scene) -> None:
    assert_error(
        cli("--json", "job", "request", scene.path, "bad", scene.asset, "proxy"), "invalid_argument", 2
    )
    assert_error(cli("--json", "job", "show", scene.path, ABSENT.upper()), "invalid_argument", 2)


def test_not_found_is_3(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    assert_error(cli("--json", "job", "show", scene.path, ABSENT), "not_found", 3)
    assert_error(cli("--json", "job", "list", str(tmp_path / "absent.pproj")), "not_found", 3)


def test_already_exists_and_conflict_are_4(cli: Cli, scene: Scene) -> None:
    assert_error(cli("--json", "init", scene.path), "already_exists", 4)
    job = scene.request()
    scene.claim(job)
    again = cli(
        "--json",
        "job",
        "claim",
        scene.path,
        job,
        "--tool-name",
        "W",
        "--lease-token-file",
        str(scene.dir / "x"),
    )
    assert_error(again, "conflict", 4)


def test_io_and_storage_are_7(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.mov")
    assert_error(
        cli("--json", "representation", "add", scene.path, scene.asset, "original", missing), "io", 7
    )
    not_a_production = tmp_path / "notes.txt"
    not_a_production.write_text("just text, not a production\n" * 100)
    assert_error(cli("--json", "job", "list", str(not_a_production)), "storage", 7)


def test_unsupported_is_8(cli: Cli, scene: Scene) -> None:
    set_schema_version(scene.path, 9999)
    assert_error(cli("--json", "job", "list", scene.path), "unsupported", 8)


@pytest.fixture
def replace_job_counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[..., None]], None]]:
    """Replace ``job counts``' handler, in the parser too: the command line keeps one parser
    per process (``app._parser``), holding the handlers it was built with; none built with the
    replacement is kept after the test."""

    def replace(handler: Callable[..., None]) -> None:
        monkeypatch.setattr(jobs, "job_counts", handler)
        app._parser.cache_clear()

    yield replace
    app._parser.cache_clear()


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_category_maps_to_its_documented_status(
    cli: Cli, scene: Scene, replace_job_counts: Callable[[Callable[..., None]], None], code: ErrorCode
) -> None:
    def raising(ctx: object) -> None:
        raise ERROR_CLASSES[code](f"simulated {code.value}")

    replace_job_counts(raising)
    expected = {"invalid_argument": 2, "not_found": 3, "already_exists": 4, "conflict": 4, "io": 7,
                "storage": 7, "migration": 7, "unsupported": 8, "internal": 9}  # fmt: skip
    assert_error(cli("--json", "job", "counts", scene.path), code.value, expected[code.value])
    assert app.EXIT_CODES[code] == expected[code.value]


def test_unexpected_exception_is_internal_without_traceback(
    cli: Cli, scene: Scene, replace_job_counts: Callable[[Callable[..., None]], None]
) -> None:
    def broken(ctx: object) -> None:
        raise RuntimeError("boom")

    replace_job_counts(broken)
    outcome = cli("--json", "job", "counts", scene.path)
    assert_error(outcome, "internal", 9)
    assert "boom" in outcome.json["error"]["message"]


def test_debug_environment_shows_traceback_for_internal_errors(
    cli: Cli,
    scene: Scene,
    replace_job_counts: Callable[[Callable[..., None]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(ctx: object) -> None:
        raise RuntimeError("boom")

    replace_job_counts(broken)
    monkeypatch.setenv("POSTPROJECT_DEBUG", "1")
    outcome = cli("job", "counts", scene.path)
    assert outcome.code == 9
    assert "Traceback" in outcome.stderr


def test_keyboard_interrupt_is_130(
    cli: Cli, scene: Scene, replace_job_counts: Callable[[Callable[..., None]], None]
) -> None:
    def interrupted(ctx: object) -> None:
        raise KeyboardInterrupt

    replace_job_counts(interrupted)
    outcome = cli("job", "counts", scene.path)
    assert (outcome.code, outcome.stdout) == (130, "")
    assert "Traceback" not in outcome.stderr


def test_human_errors_go_to_stderr_only(cli: Cli, scene: Scene) -> None:
    outcome = cli("job", "show", scene.path, ABSENT)
    assert (outcome.code, outcome.stdout) == (3, "")
    assert outcome.stderr == f"postproject: error: job {ABSENT} does not exist (not_found)\n"


def test_usage_errors_are_2_on_stderr_only(cli: Cli, scene: Scene) -> None:
    for argv in (
        ["--json", "job"],
        ["--json", "job", "show"],
        ["--json", "frobnicate"],
        ["--json", "job", "list", scene.path, "--bogus"],
    ):
        outcome = cli(*argv)
        assert (outcome.code, outcome.stdout) == (2, ""), argv
        assert "usage:" in outcome.stderr


def test_json_flag_is_accepted_after_the_command(cli: Cli, scene: Scene) -> None:
    outcome = cli("job", "show", scene.path, ABSENT, "--json")
    assert_error(outcome, "not_found", 3)


@pytest.mark.parametrize(
    ("args", "status", "code"),
    [
        (["job", "request", "p.pproj", "bad", ABSENT, "proxy"], 2, "invalid_argument"),
        (["job", "show", "p.pproj", ABSENT], 3, "not_found"),
        (["init", "p.pproj"], 4, "already_exists"),
        (["representation", "add", "p.pproj", ABSENT, "original", "missing.mov"], 7, "io"),
        (["job", "list", "notes.txt"], 7, "storage"),
        (["job", "list", "p.pproj", "--limit", "0"], 2, "invalid_argument"),
        (
            [
                "job",
                "claim",
                "p.pproj",
                ABSENT,
                "--tool-name",
                "W",
                "--lease",
                "25h",
                "--lease-token-file",
                "t",
            ],
            2,
            "invalid_argument",
        ),
    ],
)
def test_real_process_exit_codes(
    script: Script, tmp_path: Path, args: list[str], status: int, code: str
) -> None:
    assert script(["init", "p.pproj"], tmp_path).returncode == 0
    (tmp_path / "notes.txt").write_text("not a production\n" * 100)
    done = script(["--json", *args], tmp_path)
    assert done.returncode == status, done.stderr
    assert json.loads(done.stdout)["error"]["code"] == code
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "t").exists()


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "postproject", "--version"],
        capture_output=True,
        text=True,
        env=script_env(),
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("postproject ")


def test_values_past_the_parsers_limits_are_invalid_argument_not_internal(cli: Cli, scene: Scene) -> None:
    huge = '{"type": "i64", "value": ' + "1" * 5000 + "}"
    future = '{"type": "timestamp", "unix_micros": 9223372036854775807}'
    for argv in (
        ("metadata", "add", scene.path, f"asset:{scene.asset}", "https://example.org/ns", "n", huge),
        ("metadata", "add", scene.path, f"asset:{scene.asset}", "https://example.org/ns", "t", future),
        (
            "activity",
            "create",
            scene.path,
            "--kind",
            "org.example:grade",
            "--started-at-unix-micros",
            "9" * 19,
        ),
    ):
        outcome = cli("--json", *argv)
        assert outcome.code == 2, outcome
        assert outcome.json["error"]["code"] == "invalid_argument"
    assert cli.json("revisions", "latest", scene.path)["revision"]["sequence"] == 2  # nothing committed


def _argv_text(raw: bytes) -> str:
    """What Python hands a program for a command-line argument holding ``raw`` (POSIX)."""
    return os.fsdecode(raw)


@pytest.mark.parametrize(
    "argv",
    [
        ("job", "request", "{path}", _argv_text(b"org.ex\xff:render"), "{asset}", "proxy"),
        ("job", "list", "{path}", "--kind", _argv_text(b"org.example:r\xe9nder")),
        ("activity", "create", "{path}", "--kind", _argv_text(b"org.example:gr\xe4de")),
        ("media-root", "add", "{path}", _argv_text(b"m\xe9dia")),
        ("asset", "create", "{path}", "--name", _argv_text(b"A001 caf\xe9")),
        # issue 28 item 11: a media root's path (it exited 9)
        ("media-root", "add", "{path}", "r", _argv_text(b"media/\xff")),
    ],
)
def test_non_utf8_bytes_in_names_are_invalid_argument(cli: Cli, scene: Scene, argv: tuple[str, ...]) -> None:
    filled = [a.format(path=scene.path, asset=scene.asset) for a in argv]
    outcome = cli("--json", *filled)
    assert outcome.code == 2, outcome
    assert outcome.json["error"]["code"] == "invalid_argument"
    assert "UTF-8" in outcome.json["error"]["message"]


def test_a_file_whose_name_is_not_utf8_is_registrable(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9.mov"  # a Latin-1 file name from an old file server
    with open(raw, "wb") as handle:
        handle.write(b"essence")
    rep = cli.json("representation", "add", scene.path, scene.asset, "original", os.fsdecode(raw))["id"]
    shown = cli.json("representation", "show", scene.path, rep)
    assert os.fsencode(shown["path"]) == raw  # the surrogateescape round trip
    assert shown["availability"] == "online"
    assert cli.json("representation", "observe", scene.path, rep)["changed"] is False
    assert "caf\\xe9.mov" in cli("representation", "list", scene.path).stdout  # printable


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_is_not_registrable_and_never_hangs(
    scene: Scene, tmp_path: Path, script: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    fifo = tmp_path / "media" / "feed.mov"
    os.mkfifo(fifo)
    done = script(
        ["--json", "representation", "add", scene.path, scene.asset, "original", str(fifo)],
        tmp_path,
        timeout=30,
    )
    assert done.returncode == 2, done
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_argument" and "not a regular file" in error["message"]


@pytest.mark.parametrize("command", ["run", "create"])
def test_a_demo_whose_path_is_not_utf8_is_invalid_argument_before_any_clip(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Issue 28 item 11: ``demo run $'\\xed\\xa0\\x80'`` exited 9 after shooting its clips (its
    media folder, named after the production, becomes a media root, which must be UTF-8)."""
    monkeypatch.chdir(tmp_path)
    outcome = cli("--json", "demo", command, _argv_text(b"\xed\xa0\x80"))
    assert outcome.code == 2, outcome
    assert "UTF-8" in outcome.json["error"]["message"]
    assert list(tmp_path.iterdir()) == []
