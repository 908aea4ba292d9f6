"""What every command shares: the context, production opening, ids, receipts and parser helpers."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeVar

from postproject import config as settings
from postproject._version import __version__
from postproject.cli.output import Renderer, Result
from postproject.locations import netfs
from postproject.model.clock import Clock
from postproject.model.errors import InvalidArgumentError
from postproject.model.ids import _Id
from postproject.production import Production
from postproject.transaction import Transaction
from postproject.views import View, receipt_view

ORIGIN = f"postproject-cli {__version__}"
IdT = TypeVar("IdT", bound=_Id)


@dataclass
class Context:
    """One invocation: parsed arguments, the renderer, and injectable clock and stdin."""

    args: argparse.Namespace
    out: Renderer
    stdin: BinaryIO
    clock: Clock | None = None
    opened: list[Production] = field(default_factory=list)
    _config: settings.Config | None = None

    def config(self, flags: dict[str, tuple[str, object]] | None = None) -> settings.Config:
        """The effective settings: ``flags`` (key -> (option, raw value)) over the environment
        over the config file, and ``--root-map NAME=PATH`` (global, then per command) over the
        configured root maps. Loaded once per invocation."""
        if self._config is None or flags:
            given = [*getattr(self.args, "root_map", []), *getattr(self.args, "command_root_map", [])]
            self._config = settings.load(flags=flags, root_map_flags=given)
        return self._config

    def root_map(self) -> dict[str, str]:
        """This machine's media root directories (configured, then ``--root-map``)."""
        return self.config().root_map

    def open(self, path: str, *, write: bool = False) -> Production:
        """Open the production at ``path`` (read-only unless ``write``)."""
        production = Production.open(
            path,
            clock=self.clock,
            read_only=not write,
            root_map=self.root_map() or None,
            allow_injected_clock=True,  # only tests inject a clock (run(clock=...))
        )
        self.opened.append(production)
        if production.possibly_stale:
            self.out.possibly_stale = True
            self.out.note(
                f"postproject: warning: {production.location} is read where its write-ahead log cannot be "
                "read (a read-only place without the WAL's -shm file): what is shown may be behind"
            )
        if "://" not in path:
            warning = netfs.network_warning(path)
            if warning is not None:
                self.out.note(warning)
        return production


Handler = Callable[[Context], Result | int | None]


def commit(tx: Transaction) -> View:
    """Commit and return the receipt view (with the new revision's events)."""
    return receipt_view(tx.commit())


def edit(production: Production, message: str) -> Transaction:
    return production.edit(origin=ORIGIN, message=message)


def parse_id(kind: type[IdT], text: str) -> IdT:
    return kind.parse(text)


def parse_int(field: str, text: str, *, minimum: int = 0) -> int:
    if not re.fullmatch(r"[0-9]{1,19}", text) or int(text) < minimum:
        raise InvalidArgumentError(f"{field} must be a whole number of at least {minimum}; got {text[:40]!r}")
    return int(text)


def choice(field: str, text: str, options: Sequence[str]) -> str:
    if text not in options:
        raise InvalidArgumentError(f"{field} must be one of {', '.join(options)}; got {text[:40]!r}")
    return text


# --- parser construction ----------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors never echo a lease token."""

    def error(self, message: str) -> Any:
        from postproject.cli.tokens import redact

        return super().error(redact(message))


def command_options() -> Parser:
    """Options every leaf command accepts (also accepted before the command)."""
    parent = Parser(add_help=False)
    parent.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="write exactly one JSON document to stdout",
    )
    parent.add_argument(
        "--root-map",
        dest="command_root_map",
        action="append",
        default=argparse.SUPPRESS,
        metavar="NAME=PATH",
        help="this machine's directory for media root NAME (repeatable)",
    )
    return parent


def group(
    subparsers: argparse._SubParsersAction[Parser], name: str, help: str
) -> argparse._SubParsersAction[Parser]:
    """A command group such as ``job``; returns its sub-command registry."""
    parser = subparsers.add_parser(name, help=help, description=help)
    return parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)


def command(
    subparsers: argparse._SubParsersAction[Parser],
    name: str,
    help: str,
    handler: Handler,
    *,
    production: bool = True,
) -> Parser:
    """A leaf command; ``production`` adds the leading PRODUCTION argument."""
    parser = subparsers.add_parser(name, help=help, description=help, parents=[command_options()])
    parser.set_defaults(handler=handler)
    if production:
        parser.add_argument("production", metavar="PRODUCTION", help="the production file (.pproj)")
    return parser


def add_limit(parser: Parser, *, default: int = 100) -> None:
    parser.add_argument(
        "--limit", default=str(default), metavar="N", help=f"page size, 1-1000 (default {default})"
    )
    parser.add_argument("--cursor", metavar="C", help="continue from a previous page's next_cursor")
