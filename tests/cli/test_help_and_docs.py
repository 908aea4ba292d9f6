"""Every command has help text, answers ``--help``, and has an entry in docs/cli.md."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from postproject.cli.app import build_parser
from tests.cli.helpers import Cli

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """(command path, its help line, its parser) for every group and leaf command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                path = (*prefix, name)
                yield path, helps.get(name, ""), sub
                yield from commands(sub, path)


COMMANDS = list(commands(build_parser()))
LEAVES = [
    path
    for path, _, sub in COMMANDS
    if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
]


def test_the_command_set() -> None:
    names = {" ".join(path) for path in LEAVES}
    assert {
        "init", "asset create", "asset show", "asset list", "representation add", "representation show",
        "representation list", "representation observe", "media-root add", "media-root list",
        "activity create", "activity show", "metadata add", "metadata list",
        "job request", "job show", "job list", "job counts", "job claim", "job renew", "job release",
        "job complete", "job fail", "job cancel", "job plan", "job enqueue",
        "artifact evaluate", "artifact stale", "artifact reproducibility", "artifact provenance", "artifact prov",
        "revisions latest", "revisions since", "revisions wait", "revisions follow",
    } <= names  # fmt: skip


@pytest.mark.parametrize(
    ("path", "help_text"),
    [(p, h) for p, h, _ in COMMANDS],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_every_command_has_help_text(path: tuple[str, ...], help_text: str) -> None:
    assert help_text.strip(), f"postproject {' '.join(path)} has no help text"


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_command_answers_help(cli: Cli, path: tuple[str, ...]) -> None:
    outcome = cli(*path, "--help")
    assert outcome.code == 0
    assert outcome.stdout.startswith(f"usage: postproject {' '.join(path)}")


@pytest.mark.parametrize("path", [p for p, _, _ in COMMANDS], ids=" ".join)
def test_every_command_is_documented(path: tuple[str, ...]) -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert f"`postproject {' '.join(path)}`" in text, (
        f"docs/cli.md has no entry for postproject {' '.join(path)}"
    )


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_command_is_in_the_readme(path: tuple[str, ...]) -> None:
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"`{' '.join(path)}`" in readme, f"README.md does not list {' '.join(path)}"


def test_version(cli: Cli) -> None:
    outcome = cli("--version")
    assert outcome.code == 0 and outcome.stdout.startswith("postproject ")
