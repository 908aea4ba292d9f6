"""The executor's commands: ``worker run``, ``demo create`` and ``demo run``.

:func:`register` adds the ``worker`` and ``demo`` groups to a parser's sub-commands; each
leaf sets ``handler(args) -> int`` (the exit code). Invalid arguments raise
:class:`~postproject.errors.InvalidArgumentError` before any production is opened.

Exit codes of ``worker run``: 0 when it ran out of work (or ``--once`` did its job); 130
after SIGINT (Ctrl-C) and 143 after SIGTERM, once every claim still held was released. A
second Ctrl-C exits at once; the claims it leaves expire by themselves. Failed jobs do not
make the exit code non-zero: a failure is a recorded fact of the production, not a crash.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from postproject.cli.durations import parse_lease
from postproject.errors import InvalidArgumentError
from postproject.executor import jobs
from postproject.executor.console import JobBars, executor_logging, stderr_console
from postproject.executor.demo import create_demo
from postproject.executor.demo_run import DemoRunOptions, remove_demo, run_demo
from postproject.executor.recipe import Recipe
from postproject.executor.worker import Worker, WorkerConfig, default_agent
from postproject.model.identity import AgentIdentity, ToolIdentity

Handler = Callable[[argparse.Namespace], int]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``worker run``, ``demo create`` and ``demo run``."""
    worker = subparsers.add_parser("worker", help="run the reference executor")
    worker_commands = worker.add_subparsers(dest="worker_command", metavar="COMMAND", required=True)
    _worker_run_parser(worker_commands)
    demo = subparsers.add_parser("demo", help="a demo production with real media and live workers")
    demo_commands = demo.add_subparsers(dest="demo_command", metavar="COMMAND", required=True)
    _demo_parsers(demo_commands)


def _worker_run_parser(commands: argparse._SubParsersAction[Any]) -> None:
    run = commands.add_parser(
        "run",
        help="claim and run proxy and thumbnail jobs",
        description="Claim requested org.postproject:generate-proxy and generate-thumbnail jobs, make "
        "the media with PyAV and publish it. Stops when nothing is claimable (or, with --watch, on Ctrl-C).",
    )
    run.set_defaults(handler=worker_run)
    run.add_argument("production", metavar="PRODUCTION", help="the production file (.pproj)")
    run.add_argument(
        "--kind",
        action="append",
        metavar="K",
        help="only jobs of kind K (generate-proxy, generate-thumbnail; repeatable)",
    )
    run.add_argument("--once", action="store_true", help="run one job, then exit")
    run.add_argument("--watch", action="store_true", help="keep waiting for new work until Ctrl-C")
    run.add_argument(
        "--lease", default="60s", metavar="DUR", help="lease duration, renewed every third (60s)"
    )
    run.add_argument(
        "--root-map",
        dest="command_root_map",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="this machine's directory for media root NAME (repeatable)",
    )
    run.add_argument("--concurrency", default="1", metavar="N", help="jobs run at once, 1-16 (1)")
    run.add_argument("--tool-name", metavar="N", help=f"tool name recorded on claims ({jobs.TOOL.name!r})")
    run.add_argument("--agent-name", metavar="A", help="agent recorded on claims (<hostname>/<pid>)")
    run.add_argument(
        "--proxy-format", choices=jobs.PROXY_FORMATS, default="mp4", help="proxy container (mp4)"
    )
    run.add_argument(
        "--thumbnail-format", choices=jobs.THUMBNAIL_FORMATS, default="jpg", help="thumbnail format (jpg)"
    )
    run.add_argument("--verbose", action="store_true", help="also log debug details")


def _demo_parsers(commands: argparse._SubParsersAction[Any]) -> None:
    create = commands.add_parser("create", help="create the demo production with real media")
    create.set_defaults(handler=demo_create)
    run = commands.add_parser("run", help="the monitor on the demo production, with live workers")
    run.set_defaults(handler=demo_run)
    for parser in (create, run):
        parser.add_argument("production", metavar="PRODUCTION", help="the production file to create (.pproj)")
        parser.add_argument(
            "--assets", default="6", metavar="N", help="how many clips (6; the full mix needs 3)"
        )
        parser.add_argument("--seed", default="0", metavar="S", help="varies the clips' colours (0)")
        parser.add_argument("--recipe", metavar="FILE", help="a demo recipe other than the shipped one")
    run.add_argument("--fresh", action="store_true", help="delete the demo production and its media first")
    run.add_argument("--workers", default="2", metavar="N", help="worker processes, 1-8 (2)")


# --- handlers -----------------------------------------------------------------------------


def worker_run(args: argparse.Namespace) -> int:
    """``worker run``: returns 0, or 130/143 after SIGINT/SIGTERM."""
    args = _namespace(args)
    config = WorkerConfig(
        Path(args.production),
        kinds=_kinds(args.kind),
        lease=parse_lease(args.lease),
        root_map=_root_map([*(getattr(args, "root_map", None) or []), *args.command_root_map]),
        concurrency=_int("--concurrency", args.concurrency, 1, 16),
        once=args.once,
        watch=args.watch,
        tool=ToolIdentity(args.tool_name, jobs.TOOL.version, jobs.TOOL.uri) if args.tool_name else jobs.TOOL,
        agent=AgentIdentity(args.agent_name) if args.agent_name else default_agent(),
        proxy_format=args.proxy_format,
        thumbnail_format=args.thumbnail_format,
    )
    console = stderr_console()
    level = logging.DEBUG if args.verbose else logging.INFO
    with executor_logging(console, level=level), JobBars(console) as bars:
        worker = Worker(config, bars)
        with _stop_on_signals(worker.stop) as received:
            worker.run()
    return 128 + received[0] if received else 0


def demo_create(args: argparse.Namespace) -> int:
    """``demo create``."""
    args = _namespace(args)
    assets, seed = _int("--assets", args.assets, 1, 500), _int("--seed", args.seed, 0, 2**32)
    recipe = Recipe.load(Path(args.recipe) if args.recipe else None)
    console = stderr_console()
    with executor_logging(console, level=logging.ERROR), _overall_bar(console) as report:
        summary = create_demo(Path(args.production), assets=assets, seed=seed, recipe=recipe, report=report)
    counts = ", ".join(f"{n} {state.value}" for state, n in summary.jobs.items() if n)
    console.print(
        f"Created {summary.path} with {summary.assets} clips in {summary.media}; jobs: {counts}",
        soft_wrap=True,
        highlight=False,
    )
    return 0


def demo_run(args: argparse.Namespace) -> int:
    """``demo run``: the monitor's exit code."""
    args = _namespace(args)
    options = DemoRunOptions(
        assets=_int("--assets", args.assets, 1, 500),
        seed=_int("--seed", args.seed, 0, 2**32),
        workers=_int("--workers", args.workers, 1, 8),
    )
    recipe = Recipe.load(Path(args.recipe) if args.recipe else None)
    path = Path(args.production)
    console = stderr_console()
    with executor_logging(console, level=logging.ERROR):
        if args.fresh:
            remove_demo(path)
        if not path.exists():
            with _overall_bar(console) as report:
                create_demo(path, assets=options.assets, seed=options.seed, recipe=recipe, report=report)
        result = run_demo(path, options, recipe=recipe, say=console.print)
    return result.exit_code


# --- helpers ------------------------------------------------------------------------------


def _namespace(args: Any) -> argparse.Namespace:
    """The parsed arguments, whether given directly or as a CLI context holding them."""
    inner = getattr(args, "args", None)
    return inner if isinstance(inner, argparse.Namespace) else args


def _int(option: str, text: str, low: int, high: int) -> int:
    value = int(text) if text.isdigit() else low - 1
    if not low <= value <= high:
        raise InvalidArgumentError(f"{option} must be a whole number from {low} to {high}; got {text[:40]!r}")
    return value


def _kinds(given: list[str] | None) -> tuple[str, ...]:
    """Full job kinds from ``--kind`` values (``generate-proxy`` is short for the namespaced kind)."""
    if not given:
        return jobs.KINDS
    by_name = {**{k: k for k in jobs.KINDS}, **{jobs.short_kind(k): k for k in jobs.KINDS}}
    unknown = [k for k in given if k not in by_name]
    if unknown:
        raise InvalidArgumentError(f"--kind must be one of {', '.join(jobs.KINDS)}; got {unknown[0][:80]!r}")
    return tuple(dict.fromkeys(by_name[k] for k in given))


def _root_map(items: list[str]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for item in items:
        name, equals, path = item.partition("=")
        if not equals or not name or not path:
            raise InvalidArgumentError(f"--root-map must look like NAME=PATH; got {item[:120]!r}")
        mapping[name] = path
    return mapping


@contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[list[int]]:
    """SIGINT/SIGTERM call ``stop`` once, then revert to the default (a second one kills)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        signal.signal(signum, signal.SIG_DFL)
        stop()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def _overall_bar(console: Any) -> Iterator[Callable[[str, int, int], None]]:
    """One progress bar for demo creation (a silent callback when not on a terminal)."""
    if not console.is_terminal:
        yield lambda what, done, total: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("Creating the demo production", total=None)

        def report(what: str, done: int, total: int) -> None:
            progress.update(task, description=what, completed=done, total=total)

        yield report


def main(argv: list[str] | None = None) -> int:
    """``python -m postproject.executor``: these commands without the rest of the CLI."""
    from postproject.errors import PostProjectError

    parser = argparse.ArgumentParser(prog="python -m postproject.executor")
    register(parser.add_subparsers(dest="group", metavar="GROUP", required=True))
    args = parser.parse_args(argv)
    try:
        handler: Handler = args.handler
        return handler(args)
    except PostProjectError as exc:
        sys.stderr.write(f"postproject: error: {exc} ({exc.code.value})\n")
        return EXIT_CODES.get(exc.code.value, 9)


EXIT_CODES = {
    "invalid_argument": 2,
    "not_found": 3,
    "conflict": 4,
    "already_exists": 4,
    "io": 7,
    "storage": 7,
    "migration": 7,
    "unsupported": 8,
    "internal": 9,
}
