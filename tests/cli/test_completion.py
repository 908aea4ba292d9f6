"""Shell completion: scripts generated from the parser, checked by the real shells."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import Cli, script_env

SHELL_CHECK = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}


def _shell(name: str) -> str:
    found = shutil.which(name)
    if found is None:  # dev.py installs zsh and fish for the test suite
        pytest.skip(f"{name} is not installed")
    return found


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_is_valid_for_the_real_shell(cli: Cli, tmp_path: Path, shell: str) -> None:
    _shell(shell)
    outcome = cli("completion", shell)
    assert outcome.code == 0 and "postproject" in outcome.stdout
    script = tmp_path / f"completion.{shell}"
    script.write_text(outcome.stdout)
    checked = subprocess.run([*SHELL_CHECK[shell], str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    document = cli.json("completion", shell)
    assert document == {"shell": shell, "program": "postproject", "script": outcome.stdout}


def test_bash_completes_groups_commands_and_options(cli: Cli, tmp_path: Path) -> None:
    _shell("bash")
    script = tmp_path / "completion.bash"
    script.write_text(cli("completion", "bash").stdout)

    def complete(*words: str) -> list[str]:
        program = f"""
source {script}
COMP_WORDS=({" ".join(words)}); COMP_CWORD={len(words) - 1}
COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}
_python_argcomplete postproject "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
        done = subprocess.run(
            ["bash", "-c", program],
            capture_output=True,
            text=True,
            env=script_env(),
            cwd=tmp_path,
            check=True,
        )
        return [line.strip() for line in done.stdout.splitlines()]

    assert complete("postproject", "jo") == ["job"]
    assert complete("postproject", "job", "cl") == ["claim"]
    assert "--concurrency" in complete("postproject", "worker", "run", "x.pproj", "--con")
    assert complete("postproject", "completion", "f") == ["fish"]


def test_fish_completes_from_the_parser(cli: Cli, tmp_path: Path) -> None:
    _shell("fish")
    script = tmp_path / "completion.fish"
    script.write_text(cli("completion", "fish").stdout)
    done = subprocess.run(
        ["fish", "-c", f"source {script}; complete -C 'postproject config s'"],
        capture_output=True,
        text=True,
        env=script_env(),
        cwd=tmp_path,
        check=True,
    )
    assert done.stdout.startswith("show\t")


def test_unknown_shell_is_a_usage_error(cli: Cli) -> None:
    outcome = cli("completion", "powershell")
    assert outcome.code == 2 and "invalid choice" in outcome.stderr
