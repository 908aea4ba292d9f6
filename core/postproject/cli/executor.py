"""The executor's commands: ``worker run``, ``demo create`` and ``demo run``.

:func:`register` adds the ``worker`` and ``demo`` groups to a parser's sub-commands; each
leaf sets ``handler(args) -> int`` (the exit code). Invalid arguments raise
:class:`~postproject.model.errors.InvalidArgumentError` before any production is opened.

Exit codes of ``worker run``: 0 when it ran out of work (or ``--once`` did its job); 130
after SIGINT (Ctrl-C) and 143 after SIGTERM, once every claim still held was released. A
second Ctrl-C exits at once; the claims it leaves expire by themselves. Failed jobs do not
make the exit code non-zero: a failure is a recorded fact of the production, not a crash.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from postproject import config as settings
from postproject import humanize, locations
from postproject.cli import farm
from postproject.cli.durations import parse_lease
from postproject.executor import jobs
from postproject.executor.access import read_token
from postproject.executor.recipe import Recipe
from postproject.executor.worker import Worker, WorkerConfig, default_agent
from postproject.locations import is_location_uri, is_service_url
from postproject.logs import redact
from postproject.model.errors import InvalidArgumentError, PostProjectError
from postproject.model.identity import AgentIdentity, ToolIdentity

Handler = Callable[[argparse.Namespace], int]


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="write one summary JSON document to stdout when done",
    )


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``worker run``, ``demo create`` and ``demo run``."""
    worker = subparsers.add_parser("worker", help="run the reference executor; list registered workers")
    worker_commands = worker.add_subparsers(dest="worker_command", metavar="COMMAND", required=True)
    _worker_run_parser(worker_commands)
    farm.register_worker_commands(worker_commands)
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
    run.add_argument(
        "production",
        metavar="PRODUCTION",
        help="the production (.pproj file or postgresql:// URI), or a service's http(s)://HOST:PORT URL",
    )
    run.add_argument(
        "--token-file",
        metavar="FILE",
        help="the API token (worker role) for a service URL (else POSTPROJECT_API_TOKEN)",
    )
    run.add_argument(
        "--kind",
        action="append",
        metavar="K",
        help="only jobs of kind K (generate-proxy, generate-thumbnail; repeatable; config worker.kinds)",
    )
    run.add_argument("--once", action="store_true", help="run one job, then exit")
    run.add_argument("--watch", action="store_true", help="keep waiting for new work until Ctrl-C")
    run.add_argument(
        "--no-sweep",
        dest="sweep",
        action="store_false",
        help="do not finalize lost work of crashed workers (on by default, every 5 s)",
    )
    run.add_argument(
        "--lease", metavar="DUR", help="lease duration, renewed every third (config worker.lease; 60s)"
    )
    run.add_argument(
        "--root-map",
        dest="command_root_map",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="this machine's directory for media root NAME (repeatable)",
    )
    run.add_argument(
        "--concurrency", metavar="N", help="jobs run at once, 1-16 (config worker.concurrency; 1)"
    )
    run.add_argument("--tool-name", metavar="N", help=f"tool name recorded on claims ({jobs.TOOL.name!r})")
    run.add_argument("--agent-name", metavar="A", help="agent recorded on claims (<hostname>/<pid>)")
    run.add_argument("--proxy-format", choices=jobs.PROXY_FORMATS, help="proxy container (mp4)")
    run.add_argument("--thumbnail-format", choices=jobs.THUMBNAIL_FORMATS, help="thumbnail format (jpg)")
    run.add_argument(
        "--log-format",
        choices=("text", "json"),
        help="log lines as text or as one JSON object per line (config worker.log_format; text)",
    )
    run.add_argument("--verbose", action="store_true", help="also log debug details")
    _json_option(run)


def _demo_parsers(commands: argparse._SubParsersAction[Any]) -> None:
    create = commands.add_parser("create", help="create the demo production with real media")
    create.set_defaults(handler=demo_create)
    run = commands.add_parser("run", help="the monitor on the demo production, with live workers")
    run.set_defaults(handler=demo_run)
    for parser in (create, run):
        parser.add_argument(
            "production",
            metavar="PRODUCTION",
            help="the production to create: a .pproj file or a postgresql:// URI",
        )
        parser.add_argument(
            "--media",
            metavar="DIR",
            help="where the clips and worker logs go (default: beside the .pproj, or ./NAME-media for a URI)",
        )
        parser.add_argument(
            "--assets", default="6", metavar="N", help="how many clips (6; the full mix needs 3)"
        )
        parser.add_argument("--seed", default="0", metavar="S", help="varies the clips' colours (0)")
        parser.add_argument("--recipe", metavar="FILE", help="a demo recipe other than the shipped one")
        parser.add_argument(
            "--duration",
            metavar="SECONDS",
            help="length of each clip (the recipe's, 4 s); longer clips let you watch progress and cancel",
        )
        _json_option(parser)
    run.add_argument("--fresh", action="store_true", help="delete the demo production and its media first")
    run.add_argument("--workers", default="2", metavar="N", help="worker processes, 1-8 (2)")
    run.add_argument(
        "--service",
        action="store_true",
        help="the workers through a local service (postproject serve, started and stopped here) "
        "instead of the database",
    )


# --- handlers -----------------------------------------------------------------------------


def worker_run(args: Any) -> int:
    """``worker run``: returns 0, or 130/143 after SIGINT/SIGTERM."""
    from postproject.executor.console import JobBars, executor_logging, stderr_console

    ns = _namespace(args)
    flags = {
        "worker.lease": ("--lease", ns.lease),
        "worker.concurrency": ("--concurrency", ns.concurrency),
        "worker.kinds": ("--kind", ",".join(ns.kind) if ns.kind else None),
        "worker.tool_name": ("--tool-name", ns.tool_name),
        "worker.agent_name": ("--agent-name", ns.agent_name),
        "worker.proxy_format": ("--proxy-format", ns.proxy_format),
        "worker.thumbnail_format": ("--thumbnail-format", ns.thumbnail_format),
        "worker.log_format": ("--log-format", ns.log_format),
    }
    config = _settings(args, flags, [*(getattr(ns, "root_map", None) or []), *ns.command_root_map])
    tool_name = config["worker.tool_name"]
    agent_name = config["worker.agent_name"]
    remote = is_service_url(ns.production)
    if ns.token_file is not None and not remote:
        raise InvalidArgumentError("--token-file is for a service URL (http:// or https://)")
    token = read_token(ns.token_file) if remote else None
    worker_config = WorkerConfig(
        ns.production if remote or is_location_uri(ns.production) else Path(ns.production),
        kinds=_kinds(list(config["worker.kinds"])),
        lease=parse_lease(config["worker.lease"]),
        root_map=config.root_map,
        concurrency=config["worker.concurrency"],
        once=ns.once,
        watch=ns.watch,
        sweep=ns.sweep,
        tool=ToolIdentity(tool_name, jobs.TOOL.version, jobs.TOOL.uri) if tool_name else jobs.TOOL,
        agent=AgentIdentity(agent_name) if agent_name else default_agent(),
        proxy_format=config["worker.proxy_format"],
        thumbnail_format=config["worker.thumbnail_format"],
        token=token,
    )
    log_format = config["worker.log_format"]
    console = stderr_console()
    level = logging.DEBUG if ns.verbose else logging.INFO
    logs = executor_logging(console, level=level, log_format=log_format, worker=worker_config.agent.name)
    with logs, JobBars(console, enabled=log_format == "text") as bars:
        worker = Worker(worker_config, bars)
        with _stop_on_signals(worker.stop) as received:
            try:
                worker.run()
            except PostProjectError as exc:
                if log_format != "json":
                    raise
                return _json_failure(exc, getattr(ns, "json", False))
    code = 128 + received[0] if received else 0
    if getattr(ns, "json", False):
        _emit_json(
            {
                "production": locations.display_location(worker_config.path),
                "worker": worker_config.agent.name,
                "tool": {"name": worker_config.tool.name, "version": worker_config.tool.version},
                "kinds": list(worker_config.kinds),
                "counts": {action: worker.stats[action] for action in OUTCOMES},
                "stopped_by": signal.Signals(received[0]).name if received else None,
                "exit_code": code,
            }
        )
    return code


def _json_failure(error: PostProjectError, json_document: bool) -> int:
    """With ``--log-format json`` the final error is one more JSON log line (not the CLI's
    plain ``postproject: error:`` line), and with ``--json`` the error document on stdout."""
    message = humanize.printable(" ".join(error.message.split()))
    fields = {"action": "exit", "detail": error.code.value}
    logging.getLogger("postproject.executor").error("%s (%s)", message, error.code.value, extra=fields)
    if json_document:
        detail = {"reason": error.reason.value} if error.reason is not None else {}
        _emit_json({"error": {"code": error.code.value, "message": redact(message), **detail}})
    return EXIT_CODES.get(error.code.value, 9)


OUTCOMES = ("claimed", "succeeded", "failed", "released", "skipped", "cancelled", "requeued", "lease_lost")


def demo_create(args: Any) -> int:
    """``demo create``."""
    from postproject.executor.console import executor_logging, stderr_console
    from postproject.executor.demo import create_demo

    ns = _namespace(args)
    assets, seed = _int("--assets", ns.assets, 1, 500), _int("--seed", ns.seed, 0, 2**32)
    recipe = _with_duration(Recipe.load(Path(ns.recipe) if ns.recipe else None), ns.duration)
    console = stderr_console()
    with executor_logging(console, level=logging.ERROR), _overall_bar(console) as report:
        summary = create_demo(
            _demo_location(ns.production),
            assets=assets,
            seed=seed,
            recipe=recipe,
            report=report,
            media=_media(ns),
        )
    if getattr(ns, "json", False):
        _emit_json(
            {
                "path": str(summary.path),
                "media": str(summary.media),
                "assets": summary.assets,
                "jobs": {state.value: n for state, n in summary.jobs.items()},
            }
        )
        return 0
    counts = ", ".join(f"{n} {state.value}" for state, n in summary.jobs.items() if n)
    _say(console, f"Created {summary.path} with {summary.assets} clips in {summary.media}; jobs: {counts}")
    return 0


def demo_run(args: Any) -> int:
    """``demo run``: the monitor's exit code."""
    # (what only the demo needs loads here, not with every command: rich's progress, urllib)
    from postproject.executor.console import executor_logging, stderr_console
    from postproject.executor.demo import create_demo, demo_exists
    from postproject.executor.demo_run import DemoRunOptions, remove_demo, run_demo

    ns = _namespace(args)
    options = DemoRunOptions(
        assets=_int("--assets", ns.assets, 1, 500),
        seed=_int("--seed", ns.seed, 0, 2**32),
        workers=_int("--workers", ns.workers, 1, 8),
        media=_media(ns),
        service=bool(ns.service),
    )
    recipe = _with_duration(Recipe.load(Path(ns.recipe) if ns.recipe else None), ns.duration)
    path = _demo_location(ns.production)
    console = stderr_console()
    with executor_logging(console, level=logging.ERROR):
        if ns.fresh:
            remove_demo(path, options.media)
        if not demo_exists(path):
            with _overall_bar(console) as report:
                create_demo(
                    path,
                    assets=options.assets,
                    seed=options.seed,
                    recipe=recipe,
                    report=report,
                    media=options.media,
                )
        result = run_demo(path, options, recipe=recipe, say=lambda text: _say(console, text))
    if getattr(ns, "json", False):
        _emit_json(
            {
                "path": locations.display_location(path),
                "exit_code": result.exit_code,
                "workers": [
                    {"pid": pid, "exit_code": code}
                    for pid, code in zip(result.worker_pids, result.worker_exit_codes, strict=True)
                ],
                "requested_by_producer": result.requested_by_producer,
            }
        )
    return result.exit_code


# --- helpers ------------------------------------------------------------------------------


def _demo_location(production: str) -> Path | str:
    """A demo's PRODUCTION argument: a URI as given, otherwise a path."""
    return production if locations.is_location_uri(production) else Path(production)


def _media(ns: argparse.Namespace) -> Path | None:
    media = getattr(ns, "media", None)
    return Path(media) if media else None


def _namespace(args: Any) -> argparse.Namespace:
    """The parsed arguments, whether given directly or as a CLI context holding them."""
    inner = getattr(args, "args", None)
    return inner if isinstance(inner, argparse.Namespace) else args


def _say(console: Any, text: str) -> None:
    """A line for people on stderr: printed as is (no rich markup, so ``[gui]`` stays) and
    without characters that steer a terminal."""
    console.print(humanize.printable(text), markup=False, highlight=False, soft_wrap=True)


def _emit_json(document: dict[str, Any]) -> None:
    """The command's one JSON document on stdout."""
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    sys.stdout.flush()


def _settings(args: Any, flags: dict[str, tuple[str, object]], root_map: list[str]) -> settings.Config:
    """The effective settings (through the CLI's context when there is one)."""
    if hasattr(args, "config") and callable(args.config):
        config: settings.Config = args.config(flags)
        return config
    return settings.load(flags=flags, root_map_flags=root_map)


def _int(option: str, text: str, low: int, high: int) -> int:
    """A whole number of ASCII digits (``int()`` would also take ``३`` or ``٣``) in low-high."""
    value = int(text) if re.fullmatch(r"[0-9]{1,12}", text, re.ASCII) else low - 1
    if not low <= value <= high:
        raise InvalidArgumentError(f"{option} must be a whole number from {low} to {high}; got {text[:40]!r}")
    return value


MAX_CLIP_FRAMES = 10_000


def _with_duration(recipe: Recipe, text: str | None) -> Recipe:
    """The recipe with clips of ``--duration`` seconds (a decimal number; whole frames at its rate)."""
    if text is None:
        return recipe
    longest = MAX_CLIP_FRAMES / recipe.rate
    seconds = float(text) if re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,6})?", text, re.ASCII) else -1.0
    frames = round(seconds * recipe.rate)
    if not 1 <= frames <= MAX_CLIP_FRAMES:
        raise InvalidArgumentError(
            f"--duration must be a number of seconds from {1 / recipe.rate:.3g} to {longest:g} "
            f"(at {recipe.rate} frames a second); got {text[:40]!r}"
        )
    return recipe.with_clip(size=recipe.size, frames=frames)


def _kinds(given: list[str] | None) -> tuple[str, ...]:
    """Full job kinds from ``--kind`` values (``generate-proxy`` is short for the namespaced kind)."""
    if not given:
        return jobs.KINDS
    by_name = {**{k: k for k in jobs.KINDS}, **{jobs.short_kind(k): k for k in jobs.KINDS}}
    unknown = [k for k in given if k not in by_name]
    if unknown:
        raise InvalidArgumentError(f"--kind must be one of {', '.join(jobs.KINDS)}; got {unknown[0][:80]!r}")
    return tuple(dict.fromkeys(by_name[k] for k in given))


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
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

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
    parser = argparse.ArgumentParser(prog="python -m postproject.executor")
    register(parser.add_subparsers(dest="group", metavar="GROUP", required=True))
    args = parser.parse_args(argv)
    try:
        handler: Handler = args.handler
        return handler(args)
    except PostProjectError as exc:
        sys.stderr.write(f"postproject: error: {humanize.printable(str(exc))} ({exc.code.value})\n")
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
