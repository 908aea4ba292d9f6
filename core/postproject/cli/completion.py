"""``postproject completion bash|zsh|fish``: shell completion generated from the parser.

The script comes from argcomplete: the shell asks ``postproject`` itself for completions
(with ``_ARGCOMPLETE`` set), and :func:`postproject.cli.app.run` answers from the same
argparse parser that parses the command line, so completion can never drift from the
commands. Install it with, for example::

    postproject completion bash > ~/.local/share/bash-completion/completions/postproject
    postproject completion zsh > "${fpath[1]}/_postproject"
    postproject completion fish > ~/.config/fish/completions/postproject.fish
"""

from __future__ import annotations

import argparse

from argcomplete.shell_integration import shellcode

from postproject.cli.common import Context, Parser, command
from postproject.cli.output import Result

SHELLS = ("bash", "zsh", "fish")
PROGRAM = "postproject"


def script(shell: str) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`)."""
    script: str = shellcode([PROGRAM], shell=shell)
    return script


def completion(ctx: Context) -> Result:
    shell = ctx.args.shell
    return Result({"shell": shell, "program": PROGRAM, "script": script(shell)}, "completion")


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    about = "print a shell completion script for bash, zsh or fish"
    p = command(sub, "completion", about, completion, production=False)
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
