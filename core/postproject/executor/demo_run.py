"""``postproject demo run``: the monitor on the demo production, with live reference workers.

It (re)creates the demo production when asked or missing, starts ``workers`` reference
executors as separate processes (``python -m postproject worker run PROD --watch
--no-sweep``: the story's stuck claim waits for a supervisor), each logging to ``<stem>-media/logs/worker-N.log``), starts a *producer* thread that
requests a new proxy or thumbnail every few seconds so there is always something to watch,
and then runs the monitor. When the monitor closes (or on Ctrl-C) the producer stops and
each worker receives SIGTERM: it stops its transcode, releases its claim and exits; a worker
still running after ``grace`` seconds is killed (its claim then expires by itself).

With ``service`` (``demo run --service``, ``python3 dev.py demo --service``) the workers go
through a local service instead of the database: the demo makes a worker token (its file in
the logs folder, readable by its owner only), starts ``postproject serve`` on a free local
port (``--no-sweep`` too, logging to ``logs/service.log``) and runs the workers as
``worker run http://127.0.0.1:PORT --token-file FILE``; the service stops after the workers.

The monitor is, in order of preference: the ``monitor`` argument (tests pass a stand-in);
the command in ``POSTPROJECT_DEMO_MONITOR_CMD`` (run with the production path appended); the
PySide6 monitor (``postproject_gui.app.main``) in its own process when the ``gui`` extra is
installed; otherwise no monitor: the workers' log lines show on the terminal until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from postproject import locations
from postproject.executor import jobs
from postproject.executor.demo import STORY, DemoLocation, Report, create_demo, demo_exists, media_folder
from postproject.executor.recipe import Recipe
from postproject.model import clock as clocks
from postproject.model.access import ApiRole
from postproject.model.assets import RepresentationKind
from postproject.model.errors import ConflictError, PostProjectError, Reason, StorageError
from postproject.model.ids import AssetId, RepresentationId
from postproject.model.jobs import JobRequest
from postproject.model.refs import AssetRef, JobRef
from postproject.model.values import StringValue
from postproject.production import Production

MONITOR_ENV = "POSTPROJECT_DEMO_MONITOR_CMD"
# A terminal's Ctrl-C reaches the monitor too (one process group), also while it is still
# starting, before it handles signals itself (importing Qt takes a while), where it would stop
# with a traceback. So the monitor ignores SIGINT until then: the demo stops it with SIGTERM.
_GUI_LAUNCH = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from postproject_gui.app import main; sys.exit(main(sys.argv[1:]))"
)

Monitor = Callable[[DemoLocation], int]
Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class DemoRunResult:
    """The monitor's exit code and what became of each worker process."""

    exit_code: int
    worker_pids: tuple[int, ...]
    worker_exit_codes: tuple[int | None, ...]
    requested_by_producer: int


@dataclass(frozen=True, slots=True)
class DemoRunOptions:
    fresh: bool = False
    assets: int = 6
    seed: int = 0
    workers: int = 2
    lease: str = "30s"
    producer_interval: float = 3.0
    producer_cap: int = 60
    grace: float = 10.0
    media: Path | None = None  # where clips and worker logs go (default: demo.media_folder)
    service: bool = False  # the workers through a local service (see the module docstring)


def run_demo(
    path: DemoLocation,
    options: DemoRunOptions | None = None,
    *,
    recipe: Recipe | None = None,
    monitor: Monitor | None = None,
    report: Report | None = None,
    say: Say = lambda text: None,
) -> DemoRunResult:
    """Run the demo (see the module docstring) and return once the monitor has closed.

    ``path`` is a production file or a ``postgresql://`` URI; the workers, the producer and the
    monitor each connect to it themselves (a password comes from ``PGPASSWORD`` or a passfile)."""
    options = options or DemoRunOptions()
    recipe = recipe or Recipe.load()
    if options.fresh:
        remove_demo(path, options.media)
    if not demo_exists(path):
        create_demo(
            path, assets=options.assets, seed=options.seed, recipe=recipe, report=report, media=options.media
        )
    show, attached = _choose_monitor(monitor, say)
    producer = Producer(path, recipe, options.producer_interval, options.producer_cap)
    with contextlib.ExitStack() as stack:
        service = stack.enter_context(_local_service(path, options, say)) if options.service else None
        procs = _start_workers(path, options, attached, service)
        producer.start()
        with _interrupt_once() as shield:
            try:
                code = show(path)
            except KeyboardInterrupt:
                code = 130
            finally:
                shield()  # the shutdown below is never cut short by a second Ctrl-C
                producer.stop()
                exit_codes = stop_workers(procs, options.grace)
    return DemoRunResult(code, tuple(p.pid for p in procs), exit_codes, producer.requested)


@dataclass(frozen=True, slots=True)
class LocalService:
    """The demo's service: its URL and the worker token's file."""

    url: str
    token_file: Path


@contextlib.contextmanager
def _local_service(path: DemoLocation, options: DemoRunOptions, say: Say) -> Iterator[LocalService]:
    """``postproject serve`` over the demo production on a free local port, with a new worker
    token, until the block ends (then SIGTERM: it drains and exits)."""
    folder = media_folder(path, options.media) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    with Production.open(path) as production, production.edit(origin="demo") as tx:
        secret = tx.create_api_token(
            f"demo-workers-{os.getpid()}-{uuid.uuid4().hex[:8]}", ApiRole.WORKER
        ).secret
        tx.commit()
    token_file = folder / "worker.token"
    token_file.unlink(missing_ok=True)
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "postproject",
        "serve",
        str(path),
        "--listen",
        f"127.0.0.1:{port}",
        "--no-sweep",
    ]
    with open(folder / "service.log", "ab") as out:
        # Its own session: a Ctrl-C in the terminal reaches the workers and the demo, not the
        # service, which must outlive the workers (they release their claims through it); the
        # demo stops it with SIGTERM once they are gone.
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
    try:
        _wait_for_health(proc, url, folder / "service.log")
        say(f"the workers go through a local service at {url} (its log: {folder / 'service.log'})")
        yield LocalService(url, token_file)
    finally:
        stop_workers([proc], options.grace)


def _wait_for_health(proc: subprocess.Popen[bytes], url: str, log: Path, timeout: float = 60.0) -> None:
    deadline = clocks.monotonic() + timeout
    pause = threading.Event()
    while True:
        if proc.poll() is not None:
            raise StorageError(
                f"the demo's service exited ({proc.returncode}); see {log}", reason=Reason.SERVER_FAILED
            )
        try:
            with urllib.request.urlopen(f"{url}/v1/health", timeout=1.0) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if clocks.monotonic() > deadline:
            raise StorageError(f"the demo's service did not answer within {timeout:.0f} s; see {log}",
                               reason=Reason.SERVER_FAILED)  # fmt: skip
        pause.wait(0.1)


def remove_demo(path: DemoLocation, media: Path | None = None) -> None:
    """Delete a demo production (its file with its -wal/-shm files, or its schema) and its media
    folder (demo productions only)."""
    if demo_exists(path):
        if not is_demo(path):
            shown = locations.display_location(path)
            raise ConflictError(
                f"{shown} is not a demo production; refusing to delete it", reason=Reason.NOT_A_DEMO
            )
        locations.remove(path)
    shutil.rmtree(media_folder(path, media), ignore_errors=True)


def is_demo(path: DemoLocation) -> bool:
    """True for a production made by ``demo create`` (its assets carry a demo story)."""
    try:
        with Production.open(path, read_only=True) as production:
            first = production.assets(limit=1).items
            return bool(first) and any(
                a.property == STORY for a in production.metadata[AssetRef(first[0].id)]
            )
    except PostProjectError:
        return False


def worker_command(
    path: DemoLocation, number: int, lease: str, service: LocalService | None = None
) -> list[str]:
    """The command line of demo worker ``number`` (through ``service`` when given). The demo
    workers never sweep lost work (``--no-sweep``): the story's dead render node keeps its
    expired claim stuck until a supervisor finalises it (the monitor's *Finalize lost work*),
    so a newcomer sees one; with the sweep the first worker ended it within seconds."""
    through = ["--token-file", str(service.token_file)] if service is not None else []
    return [
        sys.executable,
        "-m",
        "postproject",
        "worker",
        "run",
        service.url if service is not None else str(path),
        *through,
        "--watch",
        "--no-sweep",
        "--lease",
        lease,
        "--agent-name",
        f"demo-worker-{number}",
    ]


def _start_workers(
    path: DemoLocation, options: DemoRunOptions, to_files: bool, service: LocalService | None = None
) -> list[subprocess.Popen[bytes]]:
    """Start the worker processes; ``to_files`` sends each one's output to its own log file."""
    procs = []
    folder = media_folder(path, options.media) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    shown, extra = locations.for_child_process(path)
    env = {**os.environ, **extra}
    for number in range(1, options.workers + 1):
        command = worker_command(shown, number, options.lease, service)
        if not to_files:
            procs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, env=env))
            continue
        with open(folder / f"worker-{number}.log", "ab") as out:  # the child keeps its own copy
            procs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env))
    return procs


def stop_workers(procs: list[subprocess.Popen[bytes]], grace: float) -> tuple[int | None, ...]:
    """SIGTERM every worker, wait up to ``grace`` s, then kill.

    A worker handles SIGTERM like Ctrl-C (it stops its work, releases its claim and exits
    143); one still starting up, before it could claim anything, just ends quietly, which
    SIGINT would turn into a KeyboardInterrupt traceback in its log.
    """
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return tuple(proc.returncode for proc in procs)


def _choose_monitor(monitor: Monitor | None, say: Say) -> tuple[Monitor, bool]:
    """(the monitor, whether it owns the screen, so workers should log to files)."""
    if monitor is not None:
        return monitor, True
    command = _env_command()
    if command is not None:
        return (lambda path: _run_child(command, path)), True
    if _gui_installed():
        return (lambda path: _run_child([sys.executable, "-c", _GUI_LAUNCH], path)), True
    say(
        "The monitor needs the GUI extra: pip install 'postproject-monitor[gui]'. "
        "Running the workers without it; press Ctrl-C to stop."
    )
    return _wait_for_interrupt, False


def _run_child(command: list[str], path: DemoLocation) -> int:
    """Run the monitor on ``path``; if we are interrupted or terminated, end it too (never
    orphan it). A URI's password goes to it in ``PGPASSWORD``, not on its command line."""
    shown, extra = locations.for_child_process(path)
    child = subprocess.Popen([*command, shown], env={**os.environ, **extra})
    try:
        return child.wait()
    except BaseException:
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        raise


@contextlib.contextmanager
def _interrupt_once() -> Iterator[Callable[[], None]]:
    """Ctrl-C or SIGTERM ends the demo once, and nothing interrupts the shutdown that follows.

    The first SIGINT or SIGTERM raises KeyboardInterrupt (the monitor closes); from then on,
    or from when the caller calls the yielded ``shield``, both are ignored until the block
    ends. A terminal's Ctrl-C reaches the whole process group and ``dev.py`` passes it on as
    well, so a second one often arrives while the workers are being stopped: it must not
    break that half-way (a worker left running, a traceback on the terminal).
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}

    def shield() -> None:
        for number in previous:
            signal.signal(number, signal.SIG_IGN)

    def interrupt(signum: int, frame: object) -> None:
        shield()
        raise KeyboardInterrupt

    for number in previous:
        signal.signal(number, interrupt)
    try:
        yield shield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _gui_installed() -> bool:
    """PySide6 and the monitor's entry point are importable (checked without importing Qt)."""
    try:
        return importlib.util.find_spec("PySide6") is not None and (
            importlib.util.find_spec("postproject_gui.app") is not None
        )
    except ImportError:
        return False


def _env_command() -> list[str] | None:
    text = os.environ.get(MONITOR_ENV, "").strip()
    return shlex.split(text) if text else None


def _wait_for_interrupt(path: DemoLocation) -> int:
    threading.Event().wait()  # until KeyboardInterrupt
    return 0  # pragma: no cover


class Producer:
    """Requests a proxy or a thumbnail of a healthy original every ``interval`` seconds."""

    def __init__(self, path: DemoLocation, recipe: Recipe, interval: float, cap: int) -> None:
        self._path, self._recipe, self._interval, self._cap = path, recipe, interval, cap
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-producer", daemon=True)
        self.requested = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            with Production.open(self._path) as production:
                plan = _requests(production, self._recipe)
                while self.requested < self._cap and not self._halt.wait(self._interval):
                    original, asset, make, profile = next(plan)
                    kind, out = (
                        (jobs.PROXY_KIND, RepresentationKind.PROXY)
                        if make == "proxy"
                        else (jobs.THUMBNAIL_KIND, RepresentationKind.DERIVED)
                    )
                    with production.edit(origin="postproject demo", message="Request job") as tx:
                        job = tx.request_job(
                            JobRequest(kind, (original,), asset, out, self._recipe.outputs_root)
                        )
                        tx.add_metadata(JobRef(job), jobs.PROFILE, profile)
                        tx.commit()
                    self.requested += 1
        except (StorageError, StopIteration):
            return


def _requests(production: Production, recipe: Recipe) -> Iterator[tuple[RepresentationId, AssetId, str, str]]:
    """Endless (original, asset, make, profile) choices over the originals that decode."""
    damaged = {name for name, story in _stories(recipe).items() if story}
    originals = []
    for rep in production.representations(kind=RepresentationKind.ORIGINAL, limit=1000).items:
        tags = production.metadata[AssetRef(rep.asset_id)]
        if not any(a.property == STORY and a.value == StringValue(n) for a in tags for n in damaged):
            originals.append(rep)
    choices = itertools.cycle(
        [("proxy", "proxy-720p"), ("thumbnail", "thumbnail-640"), ("proxy", "proxy-1080p")]
    )
    for rep, (make, profile) in zip(itertools.cycle(originals), choices, strict=False):
        yield rep.id, rep.asset_id, make, profile


def _stories(recipe: Recipe) -> dict[str, bool]:
    """Story name -> whether its original is damaged (truncated)."""
    plans = [*recipe.assets, recipe.extra]
    return {p.story.name: p.story.truncate is not None for p in plans}
