"""``postproject``: the command line over the public core API.

Parses, calls the core, renders. Every error becomes one human line on stderr (and, with
``--json``, an ``{"error": {"code", "message"}}`` document on stdout) and an exit status from
:data:`EXIT_CODES`; no traceback reaches a user unless ``POSTPROJECT_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import signal
import stat
import sys
import threading
import traceback
from typing import Any, BinaryIO

import argcomplete

from postproject import config as settings_module
from postproject import locations
from postproject._version import __version__
from postproject.base.leases import InputChangedError
from postproject.cli import (
    access,
    artifacts,
    completion,
    db_roles,
    farm,
    feed,
    jobs,
    serve,
    settings,
    setup,
    tokens,
)
from postproject.cli import executor as executor_commands
from postproject.cli.common import Context, Parser
from postproject.cli.output import Renderer
from postproject.model import clock as clocks
from postproject.model.errors import ErrorCode, PostProjectError

EXIT_OK = 0
EXIT_INTERRUPTED = 130
EXIT_CODES: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: 2,
    ErrorCode.NOT_FOUND: 3,
    ErrorCode.ALREADY_EXISTS: 4,
    ErrorCode.CONFLICT: 4,
    ErrorCode.IO: 7,
    ErrorCode.STORAGE: 7,
    ErrorCode.MIGRATION: 7,
    ErrorCode.UNSUPPORTED: 8,
    ErrorCode.INTERNAL: 9,
}


def build_parser() -> Parser:
    parser = Parser(
        prog="postproject",
        description="Production knowledge for media post-production: assets, provenance, jobs and "
        "the revision feed. Add --json to any command for one JSON document on stdout.",
        epilog="Exit status: 0 ok, 2 invalid argument, 3 not found, 4 conflict or already exists, "
        "7 io/storage/migration, 8 unsupported, 9 internal, 130 interrupted, 143 terminated.",
    )
    parser.add_argument("--json", action="store_true", help="write exactly one JSON document to stdout")
    parser.add_argument("--version", action="version", version=f"postproject {__version__}")
    parser.add_argument(
        "--root-map",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="this machine's directory for media root NAME (repeatable)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    setup.register(sub)
    jobs.register(sub)
    artifacts.register(sub)
    feed.register(sub)
    executor_commands.register(sub)
    farm.register_clock(sub)
    access.register(sub)
    db_roles.register(sub)
    serve.register(sub)
    settings.register(sub)
    completion.register(sub)
    return parser


@functools.cache
def _parser() -> Parser:
    """The parser, built once per process (about 30 ms: a thousand arguments, each help text
    through gettext); parsing leaves it as it was, so a process that runs several commands
    (a script calling :func:`run`, the test suite) reuses it."""
    return build_parser()


def run(
    argv: list[str] | None = None,
    *,
    clock: clocks.Clock | None = None,
    stdin: BinaryIO | None = None,
) -> int:
    """Run one command; ``clock`` and ``stdin`` may be injected (tests)."""
    parser = _parser()
    argcomplete.autocomplete(parser)  # answers a shell's completion request, then exits
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(_with_default_production(parser, given))
    except SystemExit as exc:  # --help, --version or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else 2
    source = clock or clocks.SystemClock()
    out = Renderer(json_mode=bool(args.json), now_micros=lambda: clocks.to_micros(source.now()))
    if stdin is None:  # a daemon may run without any stdin at all
        stdin = getattr(sys.stdin, "buffer", None) or io.BytesIO()
    ctx = Context(args, out, stdin, clock)
    try:
        return _dispatch(ctx)
    finally:
        for production in ctx.opened:
            try:
                production.close()
            except PostProjectError:
                pass


def _with_default_production(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``argv`` with the configured default production (``production`` in the config file or
    ``POSTPROJECT_PRODUCTION``) put where the command's PRODUCTION goes, when the command line
    has none there: the first positional argument after the command is taken as the
    production only when it :func:`looks like one <_looks_like_production>`. A broken
    configuration leaves ``argv`` alone (the command then reports it)."""
    try:
        default = settings_module.load()["production"]
    except PostProjectError:
        return argv
    if default is None:
        return argv
    current, index = parser, 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            return argv
        if token.startswith("-") and token != "-":
            action = current._option_string_actions.get(token.partition("=")[0])
            takes = 0 if action is None or "=" in token else _arity(action)
            index += 1 + takes
            continue
        commands = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        if commands is None or token not in commands.choices:
            break
        current, index = commands.choices[token], index + 1
    wants = any(a.dest == "production" and not a.option_strings for a in current._actions)
    if not wants or (index < len(argv) and _looks_like_production(argv[index])):
        return argv
    return [*argv[:index], str(default), *argv[index:]]


def _arity(action: argparse.Action) -> int:
    """How many values follow the option (``store_true`` and the like take none)."""
    if isinstance(action.nargs, int):
        return action.nargs
    return 0 if isinstance(action, _FLAGS) else 1


_FLAGS = (argparse._StoreConstAction, argparse._HelpAction, argparse._VersionAction, argparse._CountAction)


def _looks_like_production(text: str) -> bool:
    """A ``.pproj`` path, an existing SQLite file, or an engine URL (``scheme://...``); a
    libpq ``key=value`` string too, so that it is refused as a location rather than left as an
    unexpected argument (which a usage error would echo, password and all)."""
    if text.endswith(".pproj") or "://" in text or locations.is_conninfo(text):
        return True
    try:
        if not stat.S_ISREG(os.stat(text).st_mode):  # never open a FIFO or a device
            return False
        with open(text, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except (OSError, ValueError):
        return False


def _dispatch(ctx: Context) -> int:
    out = ctx.out
    try:
        result = ctx.args.handler(ctx)
        if isinstance(result, int):  # commands that manage their own output (executor)
            return result
        if result is not None:
            out.emit(result)
        return EXIT_OK
    except PostProjectError as exc:
        extra = {"commit_receipt": exc.receipt} if isinstance(exc, tokens.DeliveryError) else None
        return _fail(out, exc.code, exc.message, extra, detail=_detail(exc))
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_CODES[ErrorCode.IO]
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        return _fail(out, ErrorCode.IO, f"{exc.strerror or exc}{where}")
    except KeyboardInterrupt:
        out.note("postproject: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the documented last resort: a bug, in one line
        if os.environ.get("POSTPROJECT_DEBUG") == "1":
            out.note(traceback.format_exc())
        message = f"internal error ({type(exc).__name__}): {exc}; rerun with POSTPROJECT_DEBUG=1 for details"
        return _fail(out, ErrorCode.INTERNAL, message)


def _detail(exc: PostProjectError) -> dict[str, Any]:
    """The refined case of an error for scripts: ``reason`` (an :class:`~postproject.Reason`
    value) when there is one, and the structured facts some reasons carry."""
    detail: dict[str, Any] = {}
    if exc.reason is not None:
        detail["reason"] = exc.reason.value
    if isinstance(exc, InputChangedError):
        detail["input_id"] = str(exc.input_id)
        detail["superseding_revision"] = exc.superseding_revision
    return detail


def _fail(
    out: Renderer,
    code: ErrorCode,
    message: str,
    extra: dict[str, Any] | None = None,
    *,
    detail: dict[str, Any] | None = None,
) -> int:
    try:
        out.error(code.value, tokens.redact(message), extra, detail=detail)
    except BrokenPipeError:
        _silence_stdout()
    return EXIT_CODES[code]


def _silence_stdout() -> None:
    """After the reader of stdout went away, point stdout at /dev/null so exit stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Run one command (as :func:`run`, with the real clock and stdin)."""
    return run(argv)


def console_main() -> int:
    """The ``postproject`` console script (and ``python -m postproject``)."""
    code = run(None)
    _ignore_late_interrupts()
    return code


def _ignore_late_interrupts() -> None:
    """Once the exit status is decided, a second Ctrl-C (a wrapper such as ``dev.py`` passing
    the first one on) must not change it: Python restores the default SIGINT action while it
    shuts down, and a signal landing then would kill the process silently (status -2)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())
