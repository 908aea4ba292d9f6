"""What every request passes first: its id, its body's limits, the access log, the last resort.

:class:`Gate` is the outermost middleware of the app (inside Starlette's own error
middleware). For each HTTP request it

- gives it an id (``X-Request-Id`` on the response, ``instance`` in a problem, the access
  log's ``request_id``);
- reads a body of at most 256 KiB (``413``), which must be JSON (``415``), with no duplicate
  member names and nested at most 32 deep (``400`` ``invalid_argument``): the endpoints then
  validate the parsed document against their models, and the raw parsed document stays in
  ``request.state.json_body`` (an ``Idempotency-Key`` replay compares parsed bodies);
- answers an error nothing else caught as a ``500`` problem, logging the traceback here only;
- writes one access log line: method, path, status, duration, client, principal and request
  id, never a header's value or a body.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from postproject.model import clock as clocks
from postproject.service.problems import MEDIA_TYPE, Problem, encode, scrub

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("postproject.service.access")
log = logging.getLogger("postproject.service")
WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class _Duplicate(Exception):
    pass


def _members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate(key)
        found[key] = value
    return found


def depth_of(document: object) -> int:
    """How deeply ``document`` nests (a scalar is 0, ``[]`` and ``{}`` are 1), without recursion."""
    deepest = 0
    todo: list[tuple[object, int]] = [(document, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict):
            level += 1
            todo.extend((value, level) for value in item.values())
        elif isinstance(item, list):
            level += 1
            todo.extend((value, level) for value in item)
        deepest = max(deepest, level)
    return deepest


def parse_body(body: bytes, max_depth: int) -> Any:
    """The JSON document of a body (``400`` for bad JSON, a duplicate member, too deep)."""
    try:
        document = json.loads(body.decode("utf-8"), object_pairs_hook=_members)
    except _Duplicate as exc:
        raise Problem(
            400, "invalid_argument", f"duplicate member {scrub(str(exc))[:80]!r} in the JSON body",
            reason="duplicate_member",
        ) from None  # fmt: skip
    except RecursionError:
        raise Problem(400, "invalid_argument", "the JSON body nests too deeply", reason="too_deep") from None
    except (UnicodeDecodeError, ValueError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
        raise Problem(
            400, "invalid_argument", f"the body is not valid JSON ({detail})", reason="malformed_json"
        ) from None
    if depth_of(document) > max_depth:
        raise Problem(
            400, "invalid_argument", f"the JSON body nests deeper than {max_depth} levels", reason="too_deep"
        )
    return document


class Gate:
    """The outermost middleware (see the module docstring)."""

    def __init__(self, app: App, *, max_body: int, max_depth: int) -> None:
        self.app = app
        self.max_body = max_body
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = clocks.monotonic()
        sent: dict[str, int] = {}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent["status"] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            if scope["method"] in WITH_BODY:
                body = await self._body(scope, receive)
                if body:
                    state["json_body"] = parse_body(body, self.max_depth)
                receive = _replay(body, receive)
            await self.app(scope, receive, send_with_id)
        except Problem as problem:
            if "status" not in sent:
                await _send_problem(send_with_id, problem, request_id)
        except Exception:
            log.exception("request %s failed", request_id, extra={"action": "request_error"})
            if "status" not in sent:
                await _send_problem(send_with_id, Problem(500, "internal", "internal error"), request_id)
        finally:
            self._log(scope, sent.get("status", 0), clocks.monotonic() - started, request_id)

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        headers = dict(scope.get("headers", []))
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            raise _too_large(self.max_body)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                raise _too_large(self.max_body)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            kind = headers.get(b"content-type", b"application/json").split(b";")[0].strip().lower()
            if kind != b"application/json" and not kind.endswith(b"+json"):
                raise Problem(415, "unsupported", "the body must be JSON (Content-Type: application/json)",
                              reason="not_json")  # fmt: skip
        return body

    def _log(self, scope: Scope, status: int, elapsed: float, request_id: str) -> None:
        if not access_log.isEnabledFor(logging.INFO):
            return
        client = scope.get("client")
        address = client[0] if client else "-"
        query = scope.get("query_string", b"").decode("latin-1")
        path = scrub(scope["path"] + (f"?{query}" if query else ""))
        principal = scope.get("state", {}).get("principal") or "-"
        access_log.info(
            '%s "%s %s" %d %.1fms principal=%s request_id=%s',
            address, scope["method"], path, status, elapsed * 1000, principal, request_id,
            extra={"action": "request", "detail": request_id},
        )  # fmt: skip


def _too_large(limit: int) -> Problem:
    return Problem(
        413, "unsupported", f"the body is larger than {limit // 1024} KiB", reason="body_too_large"
    )


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body read already once, then passes on (a disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _send_problem(send: Send, problem: Problem, request_id: str) -> None:
    body = encode(problem, request_id)
    headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in problem.headers.items()]
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
