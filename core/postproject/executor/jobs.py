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

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import av

from postproject._version import __version__
from postproject.errors import NotFoundError, UnsupportedError
from postproject.executor.media import (
    PROXY_PROFILES,
    THUMBNAIL_PROFILES,
    MediaInfo,
    MediaStopped,
    make_proxy,
    make_thumbnail,
)
from postproject.model.assets import RepresentationKind
from postproject.model.identity import ToolIdentity
from postproject.model.jobs import MAX_DIAGNOSTIC_BYTES, Job
from postproject.model.metadata import EXECUTOR_VOCABULARY, Property
from postproject.model.refs import JobRef
from postproject.production import Production
from postproject.values import StringValue

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

    job: Job
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


def label_of(production: Production, job: Job) -> str:
    """``generate-thumbnail thumbnail-4k``: the short kind and the requested profile, if any."""
    values = [a.value for a in production.metadata[JobRef(job.id)] if a.property == PROFILE]
    shown = [v.value[:40] for v in values if isinstance(v, StringValue)]
    return " ".join([short_kind(job.kind), *shown[:1]])


def check_tools(kinds: tuple[str, ...]) -> None:
    """Fail early (unsupported) when PyAV lacks the H.264 encoder proxies need."""
    if PROXY_KIND not in kinds:
        return
    try:
        av.codec.Codec("libx264", "w")
    except (av.error.FFmpegError, ValueError) as exc:  # pragma: no cover - wheels ship libx264
        raise UnsupportedError(f"PyAV has no libx264 encoder, so proxies cannot be made: {exc}") from exc


def plan(production: Production, job: Job, *, proxy_format: str, thumbnail_format: str) -> Task:
    """Check a claimed job and decide its output.

    Raises:
        JobDefect: the request is unusable (fail the job with the message).
        NotHere: the input or the target root is not reachable here (release the job).
    """
    if job.kind not in _PROFILES:
        raise JobDefect(f"the reference executor does not run {job.kind!r} jobs (it runs {', '.join(KINDS)})")
    profile = _profile(production, job)
    wanted = _OUTPUT_KINDS[job.kind]
    if job.output_representation_kind is not wanted:
        raise JobDefect(
            f"{short_kind(job.kind)} makes a {wanted.value} representation; "
            f"the job requests a {job.output_representation_kind.value}"
        )
    source = _source(production, job)
    directory = _directory(production, job, source)
    asset = production.asset(job.output_asset_id)
    suffix = proxy_format if job.kind == PROXY_KIND else thumbnail_format
    stem = f"{safe_name(asset.name or str(asset.id))}_{profile}"
    return Task(job, profile, source, directory, stem, f".{suffix}", job.target_root)


def _profile(production: Production, job: Job) -> str:
    values = [a.value for a in production.metadata[JobRef(job.id)] if a.property == PROFILE]
    where = f"property 'profile' of {EXECUTOR_VOCABULARY}"
    if len(values) != 1:
        raise JobDefect(f"the job needs exactly one {where}; it has {len(values)}")
    value = values[0]
    if not isinstance(value, StringValue):
        raise JobDefect(f"the job's {where} must be a string; it is a {type(value).__name__}")
    supported = _PROFILES[job.kind]
    if value.value not in supported:
        raise JobDefect(
            f"unsupported profile {value.value[:100]!r} for {short_kind(job.kind)} "
            f"(supported: {', '.join(supported)})"
        )
    return value.value


def _source(production: Production, job: Job) -> Path:
    if len(job.inputs) != 1:
        raise JobDefect(
            f"{short_kind(job.kind)} needs exactly one input representation; the job has {len(job.inputs)}"
        )
    rep = production.representation(job.inputs[0])
    if rep.asset_id != job.output_asset_id:
        raise JobDefect(
            f"input {rep.id} belongs to asset {rep.asset_id}, not to the output asset {job.output_asset_id}"
        )
    path = production.resolve(rep)
    if path is None:
        raise NotHere(f"input {rep.id} lives under media root {rep.root!r}, which is not mapped here")
    if not path.is_file():
        raise NotHere(f"input {rep.id} is offline here ({path} is not a file)")
    return path


def _directory(production: Production, job: Job, source: Path) -> Path:
    if job.target_root is None:
        return source.parent
    try:
        directory = production.root_path(job.target_root)
    except NotFoundError as exc:
        raise JobDefect(str(exc)) from None
    if directory is None:
        raise NotHere(
            f"target root {job.target_root!r} has no directory on this machine "
            f"(pass --root-map {job.target_root}=PATH)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotHere(f"cannot create target root directory {directory}: {exc.strerror}") from None
    return directory


def safe_name(text: str) -> str:
    """A file-name-safe version of an asset name ("A001_C003 Harbour dawn" -> "A001_C003_Harbour_dawn")."""
    return _UNSAFE.sub("_", text).strip("._")[:120] or "asset"


def reserve_output(task: Task) -> Path:
    """Create an empty placeholder under a free name and return it (never another job's file).

    ``<stem><suffix>``, else ``<stem>-2<suffix>``, ... The media layer later replaces the
    placeholder atomically; callers remove it when the job does not succeed.
    """
    for candidate in _candidates(task):
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            continue
        return candidate
    raise NotHere(f"no free output name for {task.stem}{task.suffix} in {task.directory}")  # pragma: no cover


def _candidates(task: Task) -> Iterator[Path]:
    yield task.directory / f"{task.stem}{task.suffix}"
    for number in range(2, 10_000):
        yield task.directory / f"{task.stem}-{number}{task.suffix}"


def execute(
    task: Task,
    output: Path,
    progress: Callable[[float], None],
    should_stop: Callable[[], bool],
) -> MediaInfo:
    """Make the task's media into ``output`` (MediaError on failure, MediaStopped when stopped)."""
    if should_stop():
        raise MediaStopped(f"stopped before starting {task.label}")
    if task.job.kind == PROXY_KIND:
        return make_proxy(
            task.source, output, PROXY_PROFILES[task.profile], progress=progress, should_stop=should_stop
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
