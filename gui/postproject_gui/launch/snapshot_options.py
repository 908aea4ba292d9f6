"""What a headless snapshot is asked for (``--snapshot`` and its options), checked before Qt
loads: a bad option is refused at once (exit status 2), without building a window.

See :mod:`postproject_gui.launch.snapshot` for the snapshot itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from postproject import JobId, JobState, PostProjectError, RepresentationId

SIZE = (1440, 900)


class SnapshotError(Exception):
    """The snapshot could not be taken; ``exit_code`` is the process status to use."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


VIEWS = "jobs, lifecycle, job:JOB_ID, artifacts, provenance:REP_ID, dashboard or workers"


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    out: Path
    view: str = "jobs"  # see VIEWS
    state: str | None = None  # a JobState value or "stuck"; "stale" for the artifacts view
    until_revision: int | None = None
    timeout: timedelta = timedelta(seconds=30)
    size: tuple[int, int] = SIZE
    search: str = ""  # the job table's store-wide search (``--search``)

    @property
    def job_id(self) -> JobId | None:
        return JobId.parse(self.view.split(":", 1)[1]) if self.view.startswith("job:") else None

    @property
    def rep_id(self) -> RepresentationId | None:
        prefix = "provenance:"
        return RepresentationId.parse(self.view[len(prefix) :]) if self.view.startswith(prefix) else None

    @property
    def tab(self) -> str:
        return (
            self.view.split(":", 1)[0]
            if self.view.split(":", 1)[0] in ("artifacts", "provenance")
            else "jobs"
        )

    def check(self) -> None:
        kind = self.view.split(":", 1)[0]
        if self.view not in ("jobs", "lifecycle", "artifacts", "dashboard", "workers") and kind not in (
            "job",
            "provenance",
        ):
            raise SnapshotError(f"--view must be {VIEWS}; got {self.view!r}", 2)
        try:
            self.job_id  # noqa: B018 - parses
            self.rep_id  # noqa: B018 - parses
        except PostProjectError as exc:
            raise SnapshotError(f"--view {kind}: needs an id: {exc}", 2) from None
        states = {s.value for s in JobState} | {"stuck"}
        if self.tab == "artifacts":
            if self.state not in (None, "stale"):
                raise SnapshotError(
                    f"--filter-state with --view artifacts must be 'stale'; got {self.state!r}", 2
                )
        elif self.state is not None and self.state not in states:
            raise SnapshotError(f"--filter-state must be a state or 'stuck'; got {self.state!r}", 2)
