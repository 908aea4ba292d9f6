"""The worker's HTTP transport: the service's Worker API (``postproject worker run http(s)://``).

The node needs no database driver and no database credentials: an API token of the
``worker`` role (``--token-file`` or ``POSTPROJECT_API_TOKEN``) and this machine's directories
of the media roots (``--root-map``, else the paths the production stores). Each call is one
request (:class:`~postproject.executor.remote.ServiceClient`); the lease token travels only
in request bodies. The service sweeps lost work, so the worker does not; a cancel reaches
the worker through its next renewal or progress report, so the worker reports at least once
a second (:attr:`HttpBackend.report_every`). A completion or failure report carries a
report id, and is sent again with the same id after a lost answer (the service answers the
original).

Paths go over the wire relative to their media root where one applies: the service reads
a completed output through its own root map to fingerprint it.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from postproject.executor.backend import Claim, ClaimedJob, ClaimRequest, InputFile, LeaseStatus, Success
from postproject.executor.remote import ServiceClient
from postproject.model import clock as clocks
from postproject.model import values
from postproject.model.assets import RepresentationKind
from postproject.model.errors import InternalError
from postproject.model.ids import AssetId, JobId, RepresentationId
from postproject.model.jobs import AttemptOutcome
from postproject.model.metadata import Property

MAX_HOLD = 30  # seconds the service holds a claim at most (wait_seconds)
REPORT_EVERY = 1.0  # seconds: progress at least this often, so a cancel arrives within 2 s


@dataclass(frozen=True, slots=True)
class RemoteSession:
    """A registration with the service: the worker's name and its session."""

    name: str
    session: str
    heartbeat_interval: float


class HttpBackend:
    """A :class:`~postproject.executor.backend.WorkerBackend` over the Worker API."""

    peer = "service"
    sweeps = False
    report_every: float | None = REPORT_EVERY

    def __init__(
        self,
        client: ServiceClient,
        root_map: Mapping[str, str | os.PathLike[str]] | None = None,
        clock: clocks.Clock | None = None,
    ) -> None:
        self._client = client
        self.where = client.url
        self._root_map = {name: Path(path) for name, path in (root_map or {}).items()}
        self._clock = clock or clocks.SystemClock()
        self._roots: dict[str, Mapping[str, Path | None]] = {}  # by lease token, while held
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def attached(self) -> Iterator[None]:
        yield  # one client for every thread

    def close(self) -> None:
        self._client.close()

    def now(self) -> datetime:
        return self._clock.now()

    def root_directories(self) -> list[Path]:
        return [path for path in self._root_map.values() if path.is_dir()]

    # --- presence --------------------------------------------------------------------------

    def register(self, name: str, capacity: int, kinds: tuple[str, ...], host: str) -> RemoteSession:
        body = {"capacity": capacity, "kinds": list(kinds), "host": host[:256] or None}
        answer = self._client.request("PUT", f"/v1/workers/{quote(name, safe='')}", body=body).body
        return RemoteSession(
            answer["worker"], answer["session"], float(answer.get("heartbeat_interval_seconds") or 10)
        )

    def heartbeat(self, session: object) -> None:
        assert isinstance(session, RemoteSession)
        path = f"/v1/workers/{quote(session.name, safe='')}/heartbeat"
        self._client.request("POST", path, body={"session": session.session})

    def finalize_lost(self, limit: int) -> int:
        return 0  # the service sweeps

    # --- claims ----------------------------------------------------------------------------

    def claim(self, request: ClaimRequest, stop: threading.Event) -> Claim | None:
        session = request.session
        assert isinstance(session, RemoteSession)
        body: dict[str, Any] = {
            "session": session.session,
            "lease_seconds": _seconds(request.lease),
            "tool": {"name": request.tool.name, "version": request.tool.version, "uri": request.tool.uri},
            "agent": {"name": request.agent.name},
        }
        if request.skip:
            body["skip"] = sorted(str(j) for j in request.skip)[:1000]
        wait = min(MAX_HOLD, math.ceil(request.wait)) if request.wait > 0 else 0
        answer = self._client.request(
            "POST",
            f"/v1/workers/{quote(session.name, safe='')}/claims",
            body=body,
            params={"wait_seconds": wait} if wait else None,
        )
        if answer.status == 204 or answer.body is None:
            return None
        claim = self._claim(answer.body)
        with self._guard:
            self._roots[claim.token] = claim.roots
        return claim

    def _claim(self, answer: Mapping[str, Any]) -> Claim:
        view = answer["job"]
        attempts = view.get("attempts") or []
        job = ClaimedJob(
            JobId.parse(view["id"]),
            view["kind"],
            tuple(RepresentationId.parse(i) for i in view["inputs"]),
            AssetId.parse(view["output_asset_id"]),
            RepresentationKind.parse(view["output_kind"]),
            view.get("target_root"),
            int(attempts[-1]["number"]) if attempts else 1,
        )
        roots: dict[str, Path | None] = {}
        for root in answer.get("media_roots") or []:
            name = root["name"]
            mapped = self._root_map.get(name)
            roots[name] = mapped if mapped is not None else (Path(root["path"]) if root.get("path") else None)
        inputs = []
        for rep in answer.get("inputs") or []:
            root = rep.get("root")
            base = roots.get(root) if root is not None else None
            file = Path(rep["path"]) if root is None else (base / rep["path"] if base is not None else None)
            inputs.append(
                InputFile(
                    RepresentationId.parse(rep["id"]), AssetId.parse(rep["asset_id"]), root, rep["path"], file
                )
            )
        params = tuple(
            (Property(p["vocabulary"], p["property"]), values.from_json(p["value"]))
            for p in answer.get("parameters") or []
        )
        asset = answer.get("output_asset") or {}
        return Claim(answer["lease_token"], job, params, tuple(inputs), asset.get("name"), roots)

    # --- leases ----------------------------------------------------------------------------

    def renew(self, token: str, duration: timedelta) -> LeaseStatus:
        body = {"lease_token": token, "lease_seconds": _seconds(duration)}
        return _status(self._client.request("POST", "/v1/leases/renew", body=body).body)

    def progress(
        self,
        token: str,
        fraction: float | None,
        stage: str | None,
        message: str | None,
        renew: timedelta | None,
    ) -> LeaseStatus:
        body: dict[str, Any] = {"lease_token": token}
        if fraction is not None:
            body["fraction"] = min(max(float(fraction), 0.0), 1.0)
        if stage is not None:
            body["stage"] = stage
        if message is not None:
            body["message"] = message
        if renew is not None:
            body["renew_seconds"] = _seconds(renew)
        return _status(self._client.request("POST", "/v1/leases/progress", body=body).body)

    def watch(
        self, job: ClaimedJob, head: int, timeout: float, wake: threading.Event
    ) -> tuple[int, str | None]:
        wake.wait(timeout)  # no feed here: a stop arrives with a renewal or progress answer
        return head, None

    def record_log(self, token: str, *, path: Path, root: str | None) -> None:
        text, root = self._stored(token, path, root)
        self._client.request(
            "POST", "/v1/leases/log", body={"lease_token": token, "path": text, "root": root}
        )

    def _tail(self, token: str, tail: str) -> None:
        if tail:
            self._client.request("POST", "/v1/leases/log", body={"lease_token": token, "tail": tail})

    def complete(self, token: str, job: ClaimedJob, report: Success) -> None:
        self._tail(token, report.tail)
        path, root = self._stored(token, report.output, report.root)
        body = {
            "lease_token": token,
            "report_id": report.report_id,
            "outcome": "succeeded",
            "output": {"path": path, "root": root, "kind": report.kind.value},
            "activity": {
                "tool": {"name": report.tool.name, "version": report.tool.version, "uri": report.tool.uri},
                "agent": {"name": report.agent.name} if report.agent is not None else None,
                "started_at_unix_micros": clocks.to_micros(report.started_at),
                "finished_at_unix_micros": clocks.to_micros(report.finished_at),
                "parameters": [
                    {"vocabulary": prop.vocabulary, "property": prop.name, "value": values.to_json(value)}
                    for prop, value in report.parameters
                ],
            },
        }
        self._client.request("PUT", "/v1/leases/completion", body=body)
        self._forget(token)

    def fail(self, token: str, report_id: str, code: str, diagnostic: str, *, retry: bool, tail: str) -> None:
        self._tail(token, tail)
        body = {
            "lease_token": token,
            "report_id": report_id,
            "outcome": "failed",
            "error": {"code": code, "message": diagnostic[:4000], "retry": retry},
        }
        self._client.request("PUT", "/v1/leases/completion", body=body)
        self._forget(token)

    def release(self, token: str, *, tail: str) -> None:
        self._tail(token, tail)
        self._client.request("POST", "/v1/leases/release", body={"lease_token": token})
        self._forget(token)

    def confirm_stopped(self, token: str, *, tail: str) -> AttemptOutcome:
        self._tail(token, tail)
        answer = self._client.request("POST", "/v1/leases/stopped", body={"lease_token": token}).body
        self._forget(token)
        return AttemptOutcome(answer["outcome"])

    # --- paths -----------------------------------------------------------------------------

    def _stored(self, token: str, path: Path, root: str | None) -> tuple[str, str | None]:
        """``path`` as the service stores it: relative to ``root`` (or to another root of the
        claim that holds it), else absolute."""
        with self._guard:
            roots = dict(self._roots.get(token, {}))
        order = ([root] if root is not None else []) + [name for name in roots if name != root]
        for name in order:
            base = roots.get(name)
            if base is None:
                continue
            with contextlib.suppress(ValueError):
                return path.relative_to(base).as_posix(), name
        if root is not None:
            raise InternalError(f"the output {path} is not under media root {root!r} here")
        return str(path), None

    def _forget(self, token: str) -> None:
        with self._guard:
            self._roots.pop(token, None)


def _seconds(duration: timedelta) -> int:
    """Whole seconds for the wire (at least 1; a fraction rounds up)."""
    return max(1, min(86_400, math.ceil(duration.total_seconds())))


def _status(answer: Mapping[str, Any] | None) -> LeaseStatus:
    if answer is not None and answer.get("cancel_requested"):
        return LeaseStatus(answer.get("stop") or "cancelled")
    return LeaseStatus()
