"""Read functions the service runs on its reader threads, each over its own read-only
:class:`~postproject.Production`. Plain functions of (production, names, arguments), so they
are easy to test without threads. Nothing here runs on the GUI thread."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from postproject import (
    AssetId,
    FailureGroup,
    Job,
    JobId,
    JobRef,
    JobState,
    LangStringValue,
    ListValue,
    MetadataValue,
    NotFoundError,
    PostProjectError,
    Production,
    RepresentationId,
    RevisionSummary,
    StringValue,
    StructValue,
    UriValue,
)
from postproject.base.files import read_regular
from postproject_gui.look.states import expiring_at
from postproject_gui.services.types import (
    AttemptLogText,
    ClaimMark,
    ClaimOutlook,
    CompletionInfo,
    HistoryEntry,
    InputInfo,
    JobCounts,
    JobDetail,
    JobPage,
    JobRow,
    RepresentationChoice,
    RequestChoices,
    StoreQuery,
    WorkerAttempt,
    WorkerList,
)

KNOWN_KINDS = ("org.postproject:generate-proxy", "org.postproject:generate-thumbnail")
MAX_DETAIL_INPUTS = 200
MAX_CHOICES = 1000
OUTLOOK_LIMIT = 1000
MAX_COMMITS = 100_000  # revision commit times kept per reader
MAX_PARAMETERS = 10_000  # jobs' parameter texts kept per reader
PARAMETER_CHARS = 256  # of each value, as the store's search indexes it
WORKER_ATTEMPTS = 200
RUNNING_JOBS = 500  # running jobs read with the workers (for their progress)
LOG_READ_BYTES = 64 * 1024  # the end of an attempt's log file the detail shows


class NameCache:
    """Asset names, representation file names and revision commit times (all immutable once
    written)."""

    def __init__(self) -> None:
        self._assets: dict[AssetId, str | None] = {}
        self._files: dict[RepresentationId, str | None] = {}
        self._commits: dict[int, datetime | None] = {}
        self._parameters: dict[JobId, str] = {}

    def committed_at(self, production: Production, sequence: int) -> datetime | None:
        if sequence not in self._commits:
            if len(self._commits) > MAX_COMMITS:
                self._commits.clear()
            found = production.revisions(limit=1, before=sequence + 1)
            self._commits[sequence] = (
                found[0].committed_at if found and found[0].sequence == sequence else None
            )
        return self._commits[sequence]

    def parameters(self, production: Production, job_id: JobId) -> str:
        """The string values of a job's typed parameters, lower-cased, one a line (what the
        store's search finds a job by; parameters never change after the request)."""
        if job_id not in self._parameters:
            if len(self._parameters) > MAX_PARAMETERS:
                self._parameters.clear()
            values = (v for a in production.metadata[JobRef(job_id)] for v in string_values(a.value))
            self._parameters[job_id] = "\n".join(v[:PARAMETER_CHARS] for v in values).lower()
        return self._parameters[job_id]

    def prime(self, production: Production, jobs: Sequence[Job]) -> None:
        """Read what ``jobs``' rows show beside each job that is not known yet (the output
        asset's name, the first input's file name, a claimed job's lease start), together: a
        statement each for a page, not one per asset, per input and per claim."""
        assets = {j.output_asset_id for j in jobs} - self._assets.keys()
        files = {j.inputs[0] for j in jobs if j.inputs} - self._files.keys()
        if assets:
            found = production.assets_by_id(assets)
            self._assets.update({a: found[a].name if a in found else None for a in assets})
        if files:
            reps = production.representations_by_id(files)
            self._files.update({r: reps[r].path.name if r in reps else None for r in files})
        claimed = {j.updated_sequence for j in jobs if j.state is JobState.CLAIMED} - self._commits.keys()
        if claimed:  # (lease_start: when each claimed job's current term began)
            if len(self._commits) + len(claimed) > MAX_COMMITS:
                self._commits.clear()
            times = production.commit_times(claimed)
            self._commits.update({seq: times.get(seq) for seq in claimed})

    def asset(self, production: Production, asset_id: AssetId) -> str | None:
        if asset_id not in self._assets:
            try:
                self._assets[asset_id] = production.asset(asset_id).name
            except NotFoundError:
                self._assets[asset_id] = None
        return self._assets[asset_id]

    def file(self, production: Production, rep_id: RepresentationId) -> str | None:
        if rep_id not in self._files:
            try:
                self._files[rep_id] = production.representation(rep_id).path.name
            except NotFoundError:
                self._files[rep_id] = None
        return self._files[rep_id]


def string_values(value: MetadataValue) -> Iterator[str]:
    """The texts in a parameter value (strings, language-tagged strings and URIs, also inside
    lists and structures), as the store's parameter search indexes them."""
    if isinstance(value, StringValue | LangStringValue | UriValue):
        if value.value:
            yield value.value
    elif isinstance(value, ListValue):
        for item in value.values:
            yield from string_values(item)
    elif isinstance(value, StructValue):
        for _name, item in value.fields:
            yield from string_values(item)


def row(production: Production, names: NameCache, job: Job) -> JobRow:
    first = names.file(production, job.inputs[0]) if job.inputs else None
    return JobRow(
        job, names.asset(production, job.output_asset_id), first, lease_start(production, names, job)
    )


def lease_start(production: Production, names: NameCache, job: Job) -> datetime | None:
    """When a claimed job's lease began its current term: the claim, or the last renewal.

    A renewal moves the expiry but not ``claimed_at``; while a job is claimed only its claim
    and its renewals change it, so the revision that last changed it (``updated_sequence``)
    was committed when the current term began.
    """
    if job.state is not JobState.CLAIMED or job.claim is None:
        return None
    committed = names.committed_at(production, job.updated_sequence)
    return job.claim.claimed_at if committed is None else max(job.claim.claimed_at, committed)


def jobs_page(
    production: Production, names: NameCache, query: StoreQuery, cursor: str | None, limit: int
) -> JobPage:
    if query.claims_before is not None:
        page = production.claims_expiring(
            before=query.claims_before, limit=limit, cursor=cursor, kind=query.kind
        )
    else:
        page = production.jobs(
            limit=limit,
            cursor=cursor,
            state=query.state,
            kind=query.kind,
            newest_first=query.newest_first,
            search=query.search or None,
            sort=query.sort,
            requested_after=query.requested_after,
            finished_after=query.finished_after,
        )
    names.prime(production, page.items)
    return JobPage(tuple(row(production, names, j) for j in page.items), page.next_cursor)


def failure_groups(production: Production, kind: str | None) -> tuple[FailureGroup, ...]:
    return production.failure_groups(kind, limit=200)


def jobs_by_id(
    production: Production, names: NameCache, ids: Iterable[JobId], parameters: bool = False
) -> dict[JobId, JobRow | None]:
    """The current rows of these jobs (None: no such job); ``parameters``: with their
    parameters' texts (for a text search to match them as the store does)."""
    found: dict[JobId, JobRow | None] = {}
    for job_id in ids:
        try:
            shown = row(production, names, production.job(job_id))
        except NotFoundError:
            found[job_id] = None
            continue
        if parameters:
            shown = dataclasses.replace(shown, parameters=names.parameters(production, job_id))
        found[job_id] = shown
    return found


def counts(production: Production, kind: str | None) -> JobCounts:
    return JobCounts(production.job_counts(kind), kind)


def kinds(production: Production) -> tuple[str, ...]:
    return production.job_kinds()


def head(production: Production) -> int:
    return production.latest_sequence()


def revision_summaries(production: Production, count: int, before: int | None) -> tuple[RevisionSummary, ...]:
    """Up to ``count`` revision headers before sequence ``before`` (None: the newest), newest
    first, with event counts per kind instead of their events (the event log)."""
    return production.revisions(limit=count, before=before)


def claim_outlook(production: Production, names: NameCache, horizon: datetime) -> ClaimOutlook:
    page = production.claims_expiring(before=horizon, limit=OUTLOOK_LIMIT)
    marks = tuple(
        ClaimMark(j.id, j.kind, j.claim.expires_at, expiring_at(j.claim, lease_start(production, names, j)))
        for j in page.items
        if j.claim is not None
    )
    return ClaimOutlook(marks, horizon, page.next_cursor is not None)


def workers(production: Production, now: datetime) -> WorkerList:
    """Every registered worker and the jobs they run (at most ``RUNNING_JOBS``), for their progress."""
    found = tuple(production.workers())
    jobs: dict[JobId, Job] = {}
    for job_id in (j for w in found for j in w.running):
        if len(jobs) >= RUNNING_JOBS:
            break
        try:
            jobs[job_id] = production.job(job_id)
        except NotFoundError:
            continue
    return WorkerList(found, now, jobs)


def worker_attempts(
    production: Production, name: str, limit: int = WORKER_ATTEMPTS
) -> tuple[WorkerAttempt, ...]:
    """The newest attempts of worker ``name``, with the kind of each attempt's job and, for
    a running one, when its claim's lease ends (so that an expired one never reads running)."""
    jobs: dict[JobId, Job | None] = {}
    found = []
    for job_id, attempt in production.worker_attempts(name, limit):
        if job_id not in jobs:
            try:
                jobs[job_id] = production.job(job_id)
            except NotFoundError:
                jobs[job_id] = None
        job = jobs[job_id]
        claim = job.claim if job is not None else None
        running = attempt.outcome is None and claim is not None and claim.attempt == attempt.number
        expires = claim.expires_at if running and claim is not None else None
        found.append(WorkerAttempt(job_id, job.kind if job is not None else None, attempt, expires))
    return tuple(found)


def job_detail(production: Production, names: NameCache, job_id: JobId) -> JobDetail:
    job = production.job(job_id)
    history = tuple(
        HistoryEntry(e.sequence, e.committed_at, e.kind, e.origin, e.message)
        for e in production.job_history(job_id)
    )
    parameters = production.metadata[JobRef(job_id)]
    inputs = tuple(_input(production, names, rep_id) for rep_id in job.inputs[:MAX_DETAIL_INPUTS])
    root_path = None
    if job.target_root is not None:
        try:
            path = production.root_path(job.target_root)
            root_path = str(path) if path is not None else None
        except NotFoundError:
            root_path = None
    pending = production.explain_pending(job_id) if job.state is JobState.REQUESTED else None
    return JobDetail(
        row(production, names, job),
        history,
        parameters,
        inputs,
        root_path,
        _completion(production, job),
        pending,
        attempt_log_text(production, job),
    )


def attempt_log_text(production: Production, job: Job) -> AttemptLogText | None:
    """The newest attempt's log: the last ``LOG_READ_BYTES`` of its file when the file is
    on this machine, else the tail stored when it ended (None: no attempt, or no log yet)."""
    if not job.attempts:
        return None
    try:
        log = production.attempt_log(job.id)
    except NotFoundError:
        return None
    running = job.attempts[-1].outcome is None
    path = production.log_file(log)
    if path is not None:
        try:  # a regular file only, bounded in size and time (never a FIFO or a device)
            data, size = read_regular(path, LOG_READ_BYTES)
        except PostProjectError:
            pass
        else:
            text = data.decode("utf-8", "replace")
            if size > LOG_READ_BYTES:  # start at a whole line
                text = text.partition("\n")[2] or text
            return AttemptLogText(log.attempt, text, str(path), running)
    if log.tail is not None:
        return AttemptLogText(log.attempt, log.tail, "stored tail", running)
    return None


def _input(production: Production, names: NameCache, rep_id: RepresentationId) -> InputInfo:
    try:
        rep = production.representation(rep_id)
    except NotFoundError:
        return InputInfo(rep_id, None, "(missing)", None)
    return InputInfo(rep_id, rep.kind, str(rep.path), names.asset(production, rep.asset_id))


def _completion(production: Production, job: Job) -> CompletionInfo | None:
    done = job.completion
    if done is None:
        return None
    try:
        path = str(production.representation(done.representation_id).path)
    except PostProjectError:
        path = "(unreadable)"
    try:
        activity = production.activity(done.activity_id)
        kind, tool = activity.kind, (str(activity.tool) if activity.tool else None)
    except PostProjectError:
        kind, tool = None, None
    return CompletionInfo(done.representation_id, path, kind, tool)


def request_choices(production: Production, names: NameCache) -> RequestChoices:
    assets = production.assets(limit=MAX_CHOICES).items
    reps = production.representations(limit=MAX_CHOICES).items
    choices = tuple(
        RepresentationChoice(r.id, r.asset_id, names.asset(production, r.asset_id), r.kind, str(r.path))
        for r in reps
    )
    kinds = tuple(sorted({*KNOWN_KINDS, *production.job_kinds()}))
    roots = tuple(root.name for root in production.media_roots())
    return RequestChoices(kinds, tuple((a.id, a.name) for a in assets), choices, roots)
