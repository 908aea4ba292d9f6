"""The facts grid of the job detail panel: every stored fact of one job, with links."""

from __future__ import annotations

import html
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from postproject import JobId, JobState
from postproject_gui.look.states import STATE_LOOKS, ClaimHealth, Palette
from postproject_gui.models.columns import short_id
from postproject_gui.services.types import JobDetail
from postproject_gui.text import progress_text, timefmt

MAX_INPUT_LINES = 12
FACTS = (
    ("state", "State"),
    ("id", "Job ID"),
    ("kind", "Kind"),
    ("requested", "Requested"),
    ("output", "Output"),
    ("target", "Target root"),
    ("inputs", "Inputs"),
    ("holder", "Claimed by"),
    ("lease", "Lease"),
    ("progress", "Progress"),
    ("waiting_on", "Waiting on"),
    ("blocked_by", "Blocked by"),
    ("depends_on", "Depends on"),
    ("bound", "Bound inputs"),
    ("regenerates", "Regenerates"),
    ("priority", "Priority"),
    ("not_before", "Not before"),
    ("attempts", "Attempts"),
    ("retry_of", "Retry of"),
    ("retried_as", "Retried as"),
    ("completion", "Produced"),
    ("revision", "Last change"),
)


def link(href: str, text: str) -> str:
    return f'<a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>'


class JobFacts(QWidget):
    """Key/value rows. Signal: link_activated(str): ``copy:<id>``, ``file:<path>`` or
    ``job:<id>`` (show that job) links."""

    link_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(12)
        self._grid.setVerticalSpacing(3)
        self._grid.setColumnStretch(1, 1)
        self.keys: dict[str, QLabel] = {}
        self.values: dict[str, QLabel] = {}
        for row, (key, title) in enumerate(FACTS):
            name = QLabel(title, self)
            name.setProperty("role", "key")
            name.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            value = QLabel(self)
            value.setObjectName(f"fact_{key}")
            value.setWordWrap(True)
            value.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
            )
            value.setAccessibleName(title)
            value.linkActivated.connect(self.link_activated)
            self._grid.addWidget(name, row, 0)
            self._grid.addWidget(value, row, 1)
            self.keys[key], self.values[key] = name, value
        self.values["id"].setProperty("role", "mono")
        self._detail: JobDetail | None = None
        self._palette: Palette | None = None

    def set_palette(self, palette: Palette) -> None:
        self._palette = palette

    def text(self, key: str) -> str:
        return self.values[key].text()

    def show_detail(self, detail: JobDetail, now: datetime) -> None:
        self._detail = detail
        job, row = detail.job, detail.row
        self._set("id", html.escape(str(job.id)))
        self._set("kind", html.escape(job.kind))
        output = row.output_name or short_id(str(job.output_asset_id))
        self._set(
            "output",
            f"{html.escape(output)} · {job.output_representation_kind.value}<br>"
            f"<span style='font-size:8pt'>asset {link(f'copy:{job.output_asset_id}', str(job.output_asset_id))}</span>",
        )
        root = job.target_root
        self._set(
            "target",
            html.escape(f"{root} → {detail.target_root_path or 'not mapped here'}") if root else None,
        )
        self._set("inputs", self._inputs(detail))
        holder = None
        if job.claim is not None:
            claim = job.claim
            who = f"worker <b>{html.escape(claim.worker)}</b>" if claim.worker else None
            agent = html.escape(str(claim.agent)) if claim.agent else None
            by = " · ".join(x for x in (who, agent) if x)
            holder = html.escape(str(claim.tool)) + (f" @ {by}" if by else "") + f" · attempt {claim.attempt}"
        self._set("holder", holder)
        self._set(
            "priority", f"{job.priority}" + (" (higher is claimed first)" if job.priority else " (default)")
        )
        self._set("attempts", self._attempts(detail))
        self._set("retry_of", link(f"job:{job.retry_of}", str(job.retry_of)) if job.retry_of else None)
        self._set(
            "retried_as", link(f"job:{job.retried_as}", str(job.retried_as)) if job.retried_as else None
        )
        self._set("waiting_on", self._jobs(job.waiting_on, "not finished yet"))
        self._set(
            "blocked_by", self._jobs(job.blocked_by, "failed or cancelled: retry it, or cancel this job")
        )
        self._set("depends_on", self._jobs(job.depends_on, None))
        self._set("bound", self._bound(detail))
        self._set(
            "regenerates",
            f"{link(f'copy:{job.regenerates}', str(job.regenerates))} "
            "(its output supersedes this artifact when it succeeds)"
            if job.regenerates
            else None,
        )
        self._set("completion", self._completion(detail))
        self._set("revision", f"revision {job.updated_sequence}")
        self.refresh_time(now)

    def refresh_time(self, now: datetime) -> None:
        detail = self._detail
        if detail is None:
            return
        job = detail.job
        self._set(
            "requested", f"{timefmt.stamp(job.requested_at)} ({timefmt.age(job.requested_at, now)} ago)"
        )
        health = detail.row.health(now)
        state = STATE_LOOKS[job.state].label
        colour = self._palette.colour(job.state, health) if self._palette else None
        note = {
            ClaimHealth.STUCK: " — lease expired, nobody holds it",
            ClaimHealth.EXPIRING: " — lease ends soon",
        }
        text = state + note.get(health, "") if health else state
        self._set(
            "state", f"<b style='color:{colour}'>{html.escape(text)}</b>" if colour else html.escape(text)
        )
        lease = None
        if job.state is JobState.CLAIMED and job.claim is not None:
            claim = job.claim
            lease = (
                f"ends {timefmt.stamp(claim.expires_at)} ({timefmt.countdown(claim.expires_at, now)})<br>"
                f"claimed {timefmt.stamp(claim.claimed_at)} ({timefmt.age(claim.claimed_at, now)} ago)"
            )
        self._set("lease", lease)
        progress = progress_text.progress_text(job, now)
        self._set("progress", html.escape(progress) if progress else None)
        self.values["progress"].setToolTip(progress_text.progress_tip(job, now))
        not_before = None
        if job.not_before is not None:
            when = job.not_before
            wait = f"in {timefmt.span(when - now)}" if when > now else f"{timefmt.age(when, now)} ago"
            held = " — held back until then" if when > now and job.state is JobState.REQUESTED else ""
            not_before = html.escape(f"{timefmt.stamp(when)} ({wait}){held}")
        self._set("not_before", not_before)

    def _attempts(self, detail: JobDetail) -> str | None:
        job = detail.job
        made = len(job.attempts)
        if not made and job.max_attempts is None:
            return None
        limit = f" of at most {job.max_attempts}" if job.max_attempts is not None else " (no limit)"
        outcomes = [a.outcome.value for a in job.attempts if a.outcome is not None]
        summary = f" — {', '.join(outcomes)}" if outcomes else ""
        return html.escape(f"{made}{limit}{summary}")

    @staticmethod
    def _jobs(ids: tuple[JobId, ...], note: str | None) -> str | None:
        if not ids:
            return None
        links = "<br>".join(link(f"job:{i}", str(i)) for i in ids)
        return links + (f"<br><span>({html.escape(note)})</span>" if note else "")

    @staticmethod
    def _bound(detail: JobDetail) -> str | None:
        bound = detail.job.bound_inputs
        if not bound:
            return None
        lines = []
        for b in bound:
            made = (
                f" → {link(f'copy:{b.resolved}', short_id(str(b.resolved)))}"
                if b.resolved is not None
                else " (resolved when it is claimed)"
            )
            lines.append(
                f"output of job {link(f'job:{b.output.job_id}', short_id(str(b.output.job_id)))}{made}"
            )
        return "<br>".join(lines)

    def _set(self, key: str, rich: str | None) -> None:
        visible = rich is not None
        self.keys[key].setVisible(visible)
        self.values[key].setVisible(visible)
        self.values[key].setText(rich or "")

    def _inputs(self, detail: JobDetail) -> str:
        total = len(detail.job.inputs)
        if total == 0:
            return "none"
        lines = []
        for info in detail.inputs[:MAX_INPUT_LINES]:
            kind = info.kind.value if info.kind else "missing"
            owner = f", {info.asset_name}" if info.asset_name else ""
            lines.append(f"{link(f'copy:{info.id}', info.path)} <span>({kind}{html.escape(owner)})</span>")
        if total > MAX_INPUT_LINES:
            lines.append(f"… and {total - MAX_INPUT_LINES:,} more")
        return "<br>".join(lines)

    def _completion(self, detail: JobDetail) -> str | None:
        done = detail.completion
        if done is None:
            return None
        made_by = " · ".join(x for x in (done.activity_kind, done.tool) if x)
        target = f"file:{done.path}" if done.path.startswith("/") else f"copy:{done.representation_id}"
        return link(target, done.path) + (f"<br>{html.escape(made_by)}" if made_by else "")
