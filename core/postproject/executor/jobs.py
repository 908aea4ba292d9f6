"""What the reference executor does with one job: check it, name its output, make the media.

Kinds and profiles (notes §6, "Reference executor"):

=======================================  ==================================  =============
kind                                     profiles                            output kind
=======================================  ==================================  =============
``org.postproject:generate-proxy``       ``proxy-720p``, ``proxy-1080p``     ``proxy``
``org.postproject:generate-thumbnail``   ``thumbnail-640``, ``thumbnail-1280``  ``derived``
=======================================  ==================================  =============

The profile is a job parameter: exactly one string value of property ``profile`` in the
vocabulary ``https://postproject.org/ns/executor-parameters/1``.

Two kinds of "cannot do this job" are told apart:

- :class:`JobDefect`: the request itself is unusable (no or several profiles, an unknown
  profile, the wrong output kind, not exactly one input, an input of another asset). Every
  worker would reach the same verdict, so the worker *fails* the job with the message as
  its diagnostic; the monitor shows why, and nobody claims it again.
- :class:`NotHere`: this worker cannot do it on this machine (the input file is offline,
  the target root is not mapped). Another worker may, so the worker *releases* the job and
  skips it for the rest of its run. A misconfigured worker thus never burns through the
  queue failing jobs that others could do.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from postproject._version import __version__
from postproject.executor.backend import Claim, ClaimedJob
from postproject.executor.profiles import PROXY_PROFILES, THUMBNAIL_PROFILES, MediaInfo, MediaStopped
from postproject.model import clock as clocks
from postproject.model.assets import RepresentationKind
from postproject.model.errors import UnsupportedError
from postproject.model.identity import ToolIdentity
from postproject.model.jobs import MAX_DIAGNOSTIC_BYTES
from postproject.model.metadata import EXECUTOR_VOCABULARY, Property
from postproject.model.values import StringValue

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PROXY_KIND: Final = "org.postproject:generate-proxy"
THUMBNAIL_KIND: Final = "org.postproject:generate-thumbnail"
KINDS: Final = (PROXY_KIND, THUMBNAIL_KIND)
PROFILE: Final = Property(EXECUTOR_VOCABULARY, "profile")
TOOL: Final = ToolIdentity("PostProject reference executor", __version__, "https://postproject.org/")
PROXY_FORMATS: Final = ("mp4", "mov")
THUMBNAIL_FORMATS: Final = ("jpg", "png")

_OUTPUT_KINDS: Final = {PROXY_KIND: RepresentationKind.PROXY, THUMBNAIL_KIND: RepresentationKind.DERIVED}
_PROFILES: Final = {PROXY_KIND: tuple(PROXY_PROFILES), THUMBNAIL_KIND: tuple(THUMBNAIL_PROFILES)}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class JobDefect(Exception):
    """The job's request cannot be done by any worker; the message is its failure diagnostic."""


class NotHere(Exception):
    """This worker cannot do the job on this machine; the job goes back to requested."""


@dataclass(frozen=True, slots=True)
class Task:
    """A checked job: what to read, what to make, and where to put it."""

    job: ClaimedJob
    profile: str
    source: Path
    directory: Path  # where the output goes
    stem: str  # output name without suffix: "<asset name or id>_<profile>"
    suffix: str  # ".mp4", ".mov", ".jpg" or ".png"
    root: str | None  # the media root the output is stored under (the job's target root)

    @property
    def label(self) -> str:
        """``generate-proxy proxy-720p``: the kind without its namespace, and the profile."""
        return f"{short_kind(self.job.kind)} {self.profile}"


def short_kind(kind: str) -> str:
    return kind.partition(":")[2] or kind


def label_of(claim: Claim) -> str:
    """``generate-thumbnail thumbnail-4k``: the short kind and the requested profile, if any."""
    values = [value for prop, value in claim.parameters if prop == PROFILE]
    shown = [v.value[:40] for v in values if isinstance(v, StringValue)]
    return " ".join([short_kind(claim.job.kind), *shown[:1]])


def check_tools(kinds: tuple[str, ...]) -> None:
    """Fail early (unsupported) when PyAV lacks the H.264 encoder proxies need."""
    if PROXY_KIND not in kinds:
        return
    import av  # (the media libraries load where media is made: see executor.profiles)

    try:
        av.codec.Codec("libx264", "w")
    except (av.error.FFmpegError, ValueError) as exc:  # pragma: no cover - wheels ship libx264
        raise UnsupportedError(f"PyAV has no libx264 encoder, so proxies cannot be made: {exc}") from exc


def plan(claim: Claim, *, proxy_format: str, thumbnail_format: str) -> Task:
    """Check a claimed job (with what its claim says about it) and decide its output.

    Raises:
        JobDefect: the request is unusable (fail the job with the message).
        NotHere: the input or the target root is not reachable here (release the job).
    """
    job = claim.job
    if job.kind not in _PROFILES:
        raise JobDefect(f"the reference executor does not run {job.kind!r} jobs (it runs {', '.join(KINDS)})")
    profile = _profile(claim)
    wanted = _OUTPUT_KINDS[job.kind]
    if job.output_kind is not wanted:
        raise JobDefect(
            f"{short_kind(job.kind)} makes a {wanted.value} representation; "
            f"the job requests a {job.output_kind.value}"
        )
    source = _source(claim)
    directory = _directory(claim, source)
    suffix = proxy_format if job.kind == PROXY_KIND else thumbnail_format
    stem = f"{safe_name(claim.output_asset_name or str(job.output_asset_id))}_{profile}"
    return Task(job, profile, source, directory, stem, f".{suffix}", job.target_root)


def _profile(claim: Claim) -> str:
    values = [value for prop, value in claim.parameters if prop == PROFILE]
    where = f"property 'profile' of {EXECUTOR_VOCABULARY}"
    if len(values) != 1:
        raise JobDefect(f"the job needs exactly one {where}; it has {len(values)}")
    value = values[0]
    if not isinstance(value, StringValue):
        raise JobDefect(f"the job's {where} must be a string; it is a {type(value).__name__}")
    supported = _PROFILES[claim.job.kind]
    if value.value not in supported:
        raise JobDefect(
            f"unsupported profile {value.value[:100]!r} for {short_kind(claim.job.kind)} "
            f"(supported: {', '.join(supported)})"
        )
    return value.value


def _source(claim: Claim) -> Path:
    job = claim.job
    if len(job.inputs) != 1 or len(claim.inputs) != 1:
        raise JobDefect(
            f"{short_kind(job.kind)} needs exactly one input representation; the job has {len(job.inputs)}"
        )
    rep = claim.inputs[0]
    if rep.asset_id != job.output_asset_id:
        raise JobDefect(
            f"input {rep.id} belongs to asset {rep.asset_id}, not to the output asset {job.output_asset_id}"
        )
    path = rep.file
    if path is None:
        raise NotHere(f"input {rep.id} lives under media root {rep.root!r}, which is not mapped here")
    if not path.is_file():
        raise NotHere(f"input {rep.id} is offline here ({path} is not a file)")
    return path


def _directory(claim: Claim, source: Path) -> Path:
    target = claim.job.target_root
    if target is None:
        return source.parent
    if target not in claim.roots:
        raise JobDefect(f"media root {target!r} does not exist")
    directory = claim.roots[target]
    if directory is None:
        raise NotHere(
            f"target root {target!r} has no directory on this machine (pass --root-map {target}=PATH)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotHere(f"cannot create target root directory {directory}: {exc.strerror}") from None
    return directory


def safe_name(text: str) -> str:
    """A file-name-safe version of an asset name ("A001_C003 Harbour dawn" -> "A001_C003_Harbour_dawn")."""
    return _UNSAFE.sub("_", text).strip("._")[:120] or "asset"


STAGING: Final = ".postproject-staging"
STALE_UNLOCKED_SECONDS: Final = 60.0  # an attempt folder that never got its lock (killed at once)


class Staging:
    """One attempt's hidden folder, ``<directory>/.postproject-staging/<attempt>/``.

    The media is made in there (with its own ``.part`` files); :meth:`publish` moves the
    finished file to a free name in ``directory`` without ever replacing a file, and
    :meth:`close` removes the folder. While the attempt runs, the folder's ``.lock`` file
    is held locked (``flock``), so :func:`sweep` can tell an attempt whose worker died (the
    lock is free) from one still at work, on this host or another sharing the root. A
    killed worker thus leaves nothing in the target root itself, never steals a clean
    output name, and its leftovers go at the next start of any worker there.
    """

    def __init__(self, directory: Path, folder: Path, lock: int) -> None:
        self.directory = directory
        self.folder = folder
        self._lock: int | None = lock

    @classmethod
    def create(cls, directory: Path) -> Staging:
        """Sweep stale attempts under ``directory``, then make and lock a new attempt folder.

        Raises:
            NotHere: the folder cannot be made (the target root is not writable here).
        """
        sweep(directory)
        root = directory / STAGING
        for _ in range(5):  # another worker's sweep may remove an empty staging root meanwhile
            try:
                root.mkdir(exist_ok=True)
                folder = Path(tempfile.mkdtemp(prefix="attempt-", dir=root))
                break
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise NotHere(f"cannot stage output in {directory}: {exc.strerror or exc}") from None
        else:  # pragma: no cover - five sweeps in a row raced this one
            raise NotHere(f"cannot stage output in {directory}: it keeps disappearing")
        # Lock under a temporary name, then rename: a sweep never sees an unlocked ".lock".
        lock = os.open(folder / ".lock.new", os.O_CREAT | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600)
        _lock(lock, blocking=True)
        os.replace(folder / ".lock.new", folder / ".lock")
        return cls(directory, folder, lock)

    def path(self, task: Task) -> Path:
        """Where the media is made: ``<stem><suffix>`` inside the attempt folder."""
        return self.folder / f"{task.stem}{task.suffix}"

    def publish(self, staged: Path, task: Task) -> Path:
        """Move ``staged`` to the first free name (``<stem><suffix>``, ``<stem>-2<suffix>``, ...)."""
        for candidate in _candidates(task):
            try:
                os.link(staged, candidate)  # atomic, and never replaces an existing file
            except FileExistsError:
                continue
            except OSError:  # no hard links on this file system: rename (same folder tree)
                if candidate.exists():
                    continue
                os.replace(staged, candidate)
                self._remember(task, candidate)
                return candidate
            staged.unlink()
            self._remember(task, candidate)
            return candidate
        raise NotHere(
            f"no free output name for {task.stem}{task.suffix} in {task.directory}"
        )  # pragma: no cover

    def _remember(self, task: Task, published: Path) -> None:
        """Note, beside the attempt folders, the file this attempt of the job published (its
        name and identity), so a later attempt of the same job can remove it if no
        representation ever recorded it (the worker was killed before its commit)."""
        with contextlib.suppress(OSError):
            info = published.stat()
            with _record(task).open("a", encoding="utf-8") as record:
                record.write(f"{published.name}\t{info.st_dev}:{info.st_ino}\n")

    def close(self) -> None:
        """Remove the attempt folder (and the staging root when it is left empty)."""
        if self._lock is None:
            return
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self._lock)
        self._lock = None
        with contextlib.suppress(OSError):
            self.folder.parent.rmdir()

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _record(task: Task) -> Path:
    return task.directory / STAGING / f"published-{task.job.id}"


def remove_unrecorded(task: Task) -> list[Path]:
    """Before an attempt writes: remove the files earlier attempts of this job published under
    its output names that no representation records (a worker killed between publishing and
    committing), so the redo keeps the clean name; the paths removed.

    Only files this job's attempts published (the record beside the attempt folders names
    each, with its identity) and still the same file; never another job's. A record never
    names a recorded file an attempt could meet: it goes once the commit that records the file
    succeeds, and a succeeded job is never claimed again.
    """
    record = _record(task)
    try:
        lines = record.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    removed: list[Path] = []
    for line in lines:
        name, _, identity = line.partition("\t")
        path = task.directory / name
        if "/" in name or not name:
            continue
        with contextlib.suppress(OSError):
            info = path.stat()
            if f"{info.st_dev}:{info.st_ino}" == identity:
                path.unlink()
                removed.append(path)
    with contextlib.suppress(OSError):
        record.unlink()
    return removed


def forget_published(task: Task) -> None:
    """The job's output is recorded (its commit succeeded) or discarded: its record goes."""
    with contextlib.suppress(OSError):
        _record(task).unlink()
    with contextlib.suppress(OSError):
        (task.directory / STAGING).rmdir()  # only when empty


def sweep(directory: Path) -> int:
    """Remove the attempt folders under ``directory/.postproject-staging`` whose worker is
    gone (their lock is free); the number removed. Never raises for a folder it cannot
    remove (another worker may be sweeping too)."""
    root = directory / STAGING
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and _stale(Path(entry.path)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    with contextlib.suppress(OSError):
        root.rmdir()  # only when empty
    return removed


def _stale(folder: Path) -> bool:
    try:
        fd = os.open(folder / ".lock", os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:  # killed between making the folder and locking it
        try:
            return clocks.wall_millis() / 1000 - folder.stat().st_mtime > STALE_UNLOCKED_SECONDS
        except OSError:
            return False
    except OSError:
        return False
    try:
        return _lock(fd, blocking=False)
    finally:
        os.close(fd)  # closing drops the lock again


def _lock(fd: int, *, blocking: bool) -> bool:
    """Lock ``fd`` exclusively; False when ``blocking`` is off and someone else holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True
    import msvcrt  # pragma: no cover - Windows

    try:  # pragma: no cover - Windows
        msvcrt.locking(fd, msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK, 1)
    except OSError:  # pragma: no cover - Windows
        return False
    return True  # pragma: no cover - Windows


def _candidates(task: Task) -> Iterator[Path]:
    yield task.directory / f"{task.stem}{task.suffix}"
    for number in range(2, 10_000):
        yield task.directory / f"{task.stem}-{number}{task.suffix}"


def execute(
    task: Task,
    output: Path,
    progress: Callable[[float], None],
    should_stop: Callable[[], bool],
    frames: Callable[[int, int | None], None] | None = None,
) -> MediaInfo:
    """Make the task's media into ``output`` (MediaError on failure, MediaStopped when stopped);
    ``frames`` hears (frames done, frames in total) after every frame of a proxy."""
    if should_stop():
        raise MediaStopped(f"stopped before starting {task.label}")
    from postproject.executor.media import make_proxy, make_thumbnail  # (PyAV: loaded when first used)

    if task.job.kind == PROXY_KIND:
        return make_proxy(
            task.source,
            output,
            PROXY_PROFILES[task.profile],
            progress=progress,
            should_stop=should_stop,
            frames=frames,
        )
    info = make_thumbnail(task.source, output, THUMBNAIL_PROFILES[task.profile])
    progress(1.0)
    return info


def bounded(text: str, limit: int = MAX_DIAGNOSTIC_BYTES) -> str:
    """``text`` on one line, cut to ``limit`` UTF-8 bytes (ending in "…" when cut); never empty."""
    line = " ".join(text.replace("\x00", " ").split()) or "unknown error"
    data = line.encode()
    if len(data) <= limit:
        return line
    return data[: limit - 3].decode("utf-8", "ignore") + "…"
