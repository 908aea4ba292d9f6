"""Human output: key: value blocks, aligned tables, relative times, no colour."""

from __future__ import annotations

import re
import subprocess
from datetime import timedelta

from postproject import FakeClock
from postproject.cli.human import relative, span
from tests.cli.helpers import KIND, Cli, Scene

ANSI = re.compile(r"\x1b\[")


def test_span_and_relative() -> None:
    assert span(252_000_000) == "4m 12s"
    assert span(180_000_000) == "3m"
    assert span(7_500_000_000) == "2h 05m"
    assert span(273_600_000_000) == "3d 04h"
    assert span(12_000_000) == "12s"
    assert span(250_000) == "250ms"
    assert span(7) == "7us"
    assert relative(300, 100) == "in 200us"
    assert relative(100, 180_000_100) == "3m ago"


def test_job_show_says_when_the_lease_expires(cli: Cli, scene: Scene, clock: FakeClock) -> None:
    job = scene.request()
    scene.claim(job, "lease.token", "--lease", "5m", "--agent-name", "render-07")
    clock.advance(timedelta(seconds=48))
    shown = cli("job", "show", scene.path, job)
    assert shown.code == 0
    assert "lease:      expires in 4m 12s (2026-01-01 00:05:00 UTC)\n" in shown.stdout
    assert "claimed by: Proxy Worker @ render-07\n" in shown.stdout
    assert f"id:         {job}\n" in shown.stdout
    clock.advance(timedelta(minutes=7, seconds=12))
    listed = cli("job", "list", scene.path)
    assert "lease expired 3m ago" in listed.stdout
    assert not ANSI.search(shown.stdout + listed.stdout)


def test_job_list_is_an_aligned_table(cli: Cli, scene: Scene, clock: FakeClock) -> None:
    first = scene.request()
    clock.advance(timedelta(minutes=2))
    second = scene.request(kind="org.example:thumbnail")
    lines = cli("job", "list", scene.path).stdout.splitlines()
    assert re.fullmatch(r"ID +STATE +KIND +OUTPUT +DETAIL", lines[0])
    assert lines[1].startswith(first) and lines[2].startswith(second)
    assert lines[1].index("requested") == lines[0].index("STATE") == lines[2].index("requested")
    assert lines[1].endswith("requested 2m ago")
    assert KIND in lines[1]


def test_write_commands_end_with_the_revision(cli: Cli, scene: Scene) -> None:
    out = cli("job", "request", scene.path, KIND, scene.asset, "proxy", "--input", scene.original).stdout
    assert out.endswith("committed revision 3\n")
    assert "state:     requested\n" in out
    nothing = cli("representation", "observe", scene.path, scene.original).stdout
    assert nothing.endswith("nothing changed (no revision)\n")


def test_pages_say_when_more_exist(cli: Cli, scene: Scene) -> None:
    scene.request()
    scene.request()
    page = cli.json("job", "list", scene.path, "--limit", "1")
    out = cli("job", "list", scene.path, "--limit", "1").stdout
    hint = re.search(r"^more: (--cursor .+)$", out, re.M)
    assert hint is not None and "|" in page["next_cursor"]
    # Pasted into a shell, the hint is exactly two words: the option and the whole cursor.
    words = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {hint.group(1)}"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert words == ["--cursor", page["next_cursor"]]
    assert cli("job", "list", scene.path, "--state", "failed").stdout == "no jobs\n"


HOSTILE = "A001\x1b[2J\x1b]0;owned\x07\u202eevil\u2066"


def test_stored_text_cannot_steer_the_terminal(cli: Cli, scene: Scene) -> None:
    asset = cli.json("asset", "create", scene.path, "--name", HOSTILE)["id"]
    job = scene.request()
    scene.claim(job)
    failed = cli(
        "job",
        "fail",
        scene.path,
        job,
        f"line one {HOSTILE}\nline two",
        "--lease-token-file",
        str(scene.dir / "lease.token"),
    )
    assert failed.code == 0, failed
    outputs = [
        cli("asset", "show", scene.path, asset).stdout,
        cli("asset", "list", scene.path).stdout,
        cli("job", "show", scene.path, job).stdout,
        cli("job", "list", scene.path).stdout,
        cli("revisions", "since", scene.path, "0").stdout,
        cli("asset", "show", scene.path, HOSTILE).stderr,  # the error echoes the argument
    ]
    for text in outputs:
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), text
    assert "A001\\x1b[2J\\x1b]0;owned\\x07\\u202eevil\\u2066" in outputs[0]
    assert "line one A001\\x1b[2J" in outputs[2] and "\\x0aline two" in outputs[2]
    # JSON keeps the text exactly (escaped the JSON way).
    assert cli.json("asset", "show", scene.path, asset)["name"] == HOSTILE


def test_cut_cells_end_with_an_ellipsis(cli: Cli, scene: Scene) -> None:
    job = scene.request()
    scene.claim(job)
    diagnostic = "the encoder stopped: " + "x" * 200
    cli("job", "fail", scene.path, job, diagnostic, "--lease-token-file", str(scene.dir / "lease.token"))
    row = cli("job", "list", scene.path).stdout.splitlines()[1]
    detail = row[row.index("the encoder") :]
    assert detail.endswith("…") and len(detail) == 60
    assert diagnostic.startswith(detail[:-1])


def test_revision_and_counts_blocks(cli: Cli, scene: Scene) -> None:
    scene.request()
    out = cli("revisions", "latest", scene.path).stdout
    assert out.startswith("revision:  3\n")
    assert "message:   Request job\n" in out
    assert re.search(r"^ +0  job_requested job_id=\S+$", out, re.M)
    counts = cli("job", "counts", scene.path).stdout
    assert "counts: requested=1, claimed=0, succeeded=0, failed=0, cancelled=0\n" in counts


def test_other_tables(cli: Cli, scene: Scene) -> None:
    assert cli("asset", "list", scene.path).stdout.splitlines()[1].split()[1] == "A001"
    reps = cli("representation", "list", scene.path).stdout.splitlines()
    assert reps[0].split() == ["ID", "ASSET", "KIND", "PATH"]
    assert cli("media-root", "list", scene.path).stdout == "no media roots\n"
    assert cli("metadata", "list", scene.path, f"asset:{scene.asset}").stdout == "no metadata\n"
    assert cli("activity", "list", scene.path).stdout == "no activities\n"
    since = cli("revisions", "since", scene.path, "0").stdout.splitlines()
    assert since[0].startswith("#1  2026-01-01 00:00:00 UTC (") and since[0].endswith("[asset_imported]")
    assert since[-1] == "through sequence: 2"


def test_activity_and_representation_blocks(cli: Cli, scene: Scene) -> None:
    graded = scene.dir / "media" / "graded.mov"
    graded.write_bytes(b"graded")
    derived = cli.json("representation", "add", scene.path, scene.asset, "derived", str(graded))["id"]
    activity = cli.json("activity", "create", scene.path, "--kind", "org.example:grade",
                        "--input", f"{scene.original}:org.example:source", "--output", derived)["id"]  # fmt: skip
    out = cli("activity", "show", scene.path, activity).stdout
    assert f"input:    {scene.original} as org.example:source (snapshot at revision 4)\n" in out
    assert f"output:   {derived} (snapshot at revision 4)\n" in out
    rep = cli("representation", "show", scene.path, scene.original).stdout
    assert re.search(r"^fingerprints: sha256/1:[0-9a-f]{64}$", rep, re.M)
    assert "availability: online\n" in rep
