"""Duration arguments: ``1us``, ``250ms``, ``30s``, ``5m``, ``24h`` and nothing else."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from postproject.cli.durations import format_micros, parse_lease, parse_timeout
from postproject.model.errors import InvalidArgumentError
from tests.cli.helpers import Cli


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1us", timedelta(microseconds=1)),
        ("2ms", timedelta(milliseconds=2)),
        ("250ms", timedelta(milliseconds=250)),
        ("3s", timedelta(seconds=3)),
        ("30s", timedelta(seconds=30)),
        ("4m", timedelta(minutes=4)),
        ("5m", timedelta(minutes=5)),
        ("24h", timedelta(hours=24)),
        ("86400000000us", timedelta(hours=24)),
    ],
)
def test_lease_durations_accepted(text: str, expected: timedelta) -> None:
    assert parse_lease(text) == expected


@pytest.mark.parametrize(
    "text",
    ["0s", "0us", "25h", "24h1us", "86400000001us", "-1s", "+1s", "1.5s", "1", "1ns", "1S", "1 s", " 1s", "1s ",
     "", "s", "18446744073709551615h", "9" * 40 + "h", "١s", "1d"],
)  # fmt: skip
def test_lease_durations_rejected(text: str) -> None:
    with pytest.raises(InvalidArgumentError):
        parse_lease(text)


def test_timeouts_allow_zero_up_to_a_minute() -> None:
    assert parse_timeout("0s") == timedelta(0)
    assert parse_timeout("60s") == parse_timeout("60000ms") == timedelta(seconds=60)
    for text in ("60001ms", "61s", "2m", "1"):
        with pytest.raises(InvalidArgumentError):
            parse_timeout(text)


def test_format_micros_is_the_shortest_exact_spelling() -> None:
    assert [format_micros(m) for m in (0, 1, 1_500, 2_000, 90_000_000, 3_600_000_000)] == [
        "0s",
        "1us",
        "1500us",
        "2ms",
        "90s",
        "1h",
    ]


@pytest.mark.parametrize("lease", ["0s", "25h", "1.5s", "1", "1ns"])
def test_bad_lease_fails_before_the_production_is_touched(cli: Cli, tmp_path: Path, lease: str) -> None:
    missing = tmp_path / "absent.pproj"
    token = tmp_path / "lease.token"
    outcome = cli(
        "--json", "job", "claim", str(missing), "0190a000-0000-7000-8000-000000000000",
        "--tool-name", "W", "--lease", lease, "--lease-token-file", str(token),
    )  # fmt: skip
    assert (outcome.code, outcome.json["error"]["code"]) == (2, "invalid_argument")
    assert not missing.exists() and not token.exists()
