"""``GET /v1/revisions/stream``: the revision feed as Server-Sent Events.

One event per revision, oldest first: ``id:`` its sequence, ``event: revision``, ``data:`` its
JSON (what ``revisions since`` prints per revision) on one line. A stream starts after
``Last-Event-ID`` (a reconnecting client's), else after ``since``, else at the newest
revision, and reads the feed from there (keyset, a page at a time), so a resumed stream has
no gap and no duplicate. Between revisions it waits on the instance's one listener
(:class:`~postproject.service.hub.FeedHub`), sending ``: keep-alive`` every 15 s. At most
``max_streams`` are open at once; a shutdown (the hub closes) ends them.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from postproject import views
from postproject.model import clock as clocks
from postproject.model.revisions import Changes
from postproject.production import Production
from postproject.service.client_api import Pool, Reader, known_query
from postproject.service.hub import FeedHub
from postproject.service.problems import Problem

PAGE = 100


def _nothing(production: Production) -> None:
    return None


def _page(after: int, production: Production) -> Changes:
    return production.changes_since(after, PAGE)


router = APIRouter(prefix="/v1", tags=["client"], dependencies=[Depends(known_query)])


class Streams:
    """How many event streams are open (a bound per instance)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0

    def take(self) -> Slot:
        if self.open >= self.limit:
            raise Problem(503, "unavailable", f"this instance serves at most {self.limit} event streams",
                          reason="too_many_streams", headers={"Retry-After": "5"})  # fmt: skip
        self.open += 1
        return Slot(self)


class Slot:
    """One open stream's place, given back once (when the stream ends, however it ends)."""

    def __init__(self, streams: Streams) -> None:
        self._streams: Streams | None = streams

    def release(self) -> None:
        streams, self._streams = self._streams, None
        if streams is not None:
            streams.open -= 1


def _start(last_event_id: str | None, since: int | None) -> int | None:
    if last_event_id is None:
        return since
    text = last_event_id.strip()
    if not text.isdigit() or len(text) > 19:
        raise Problem(400, "invalid_argument", "Last-Event-ID must be a revision sequence",
                      extra={"field": "Last-Event-ID"})  # fmt: skip
    return int(text)


@router.get(
    "/revisions/stream",
    summary="Follow the revision feed (Server-Sent Events)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "one event per revision"}},
)
async def stream(
    request: Request,
    principal: Reader,
    pool: Pool,
    since: Annotated[int | None, Query(ge=0, le=2**62, description="start after this sequence")] = None,
    last_event_id: Annotated[str | None, Header(max_length=32)] = None,
) -> StreamingResponse:
    streams: Streams = request.app.state.streams
    hub: FeedHub = request.app.state.hub
    start = _start(last_event_id, since)
    await pool.run(_nothing, principal=principal)  # 401 or 403 now, before the stream begins
    slot = streams.take()
    return StreamingResponse(
        _events(request, pool, hub, slot, hub.head if start is None else start),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        background=BackgroundTask(slot.release),
    )


async def _events(request: Request, pool: Pool, hub: FeedHub, slot: Slot, after: int) -> AsyncIterator[str]:
    keep_alive: float = request.app.state.config.keep_alive
    try:
        yield "retry: 2000\n\n"
        quiet_since = clocks.monotonic()
        while not hub.closed:
            if hub.head > after:
                changes = await pool.run(functools.partial(_page, after))
                for revision in changes:
                    data = json.dumps(
                        views.revision_view(revision), separators=(",", ":"), ensure_ascii=False
                    )
                    yield f"id: {revision.sequence}\nevent: revision\ndata: {data}\n\n"
                after = max(after, changes.through_sequence)
                quiet_since = clocks.monotonic()
                if changes:
                    continue
                await asyncio.sleep(0.05)  # the listener saw a commit this handle does not see yet
            wait = quiet_since + keep_alive - clocks.monotonic()
            if wait <= 0:
                yield ": keep-alive\n\n"
                quiet_since = clocks.monotonic()
                continue
            await hub.wait(after, wait)
    finally:
        slot.release()
