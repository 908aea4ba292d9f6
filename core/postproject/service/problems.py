"""Every error as an RFC 9457 problem: ``application/problem+json`` with ``type``, ``title``,
``status``, ``detail``, ``instance`` (the request id), our stable ``code`` and, where there is
one, its ``reason``. The core's errors map by their code (:data:`STATUS`); the conditions only
HTTP has (no token, a role that may not, too many failures, a body too large, the time limit,
a shutdown) have codes of their own (:class:`Problem`). A stack trace never leaves the process.
"""

from __future__ import annotations

import json
import re
from typing import Any

from postproject.logs import redact
from postproject.model.errors import ErrorCode, PostProjectError

PROBLEM_TYPE = "https://postproject.org/monitor/problems#"
MEDIA_TYPE = "application/problem+json"
_API_TOKEN = re.compile(r"ppa1_[A-Za-z0-9_-]*")

# The core's stable codes -> HTTP status.
STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: 400,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.ALREADY_EXISTS: 409,
    ErrorCode.CONFLICT: 409,
    ErrorCode.IO: 422,  # a file the request names cannot be read (a completion's output)
    ErrorCode.STORAGE: 503,
    ErrorCode.MIGRATION: 500,
    ErrorCode.UNSUPPORTED: 422,
    ErrorCode.INTERNAL: 500,
}
TITLES: dict[str, str] = {
    "invalid_argument": "Invalid argument",
    "not_found": "Not found",
    "already_exists": "Already exists",
    "conflict": "Conflict",
    "io": "File error",
    "storage": "Storage unavailable",
    "migration": "Schema migration failed",
    "unsupported": "Not supported",
    "internal": "Internal error",
    "unauthenticated": "Unauthenticated",
    "forbidden": "Forbidden",
    "rate_limited": "Too many failed authentications",
    "unavailable": "Unavailable",
    "timeout": "Time limit exceeded",
}


class Problem(Exception):
    """An error the service answers itself (an HTTP condition, or a rule of the API's own)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        reason: str | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.reason = reason
        self.headers = headers or {}
        self.extra = extra or {}


def from_error(error: PostProjectError) -> Problem:
    """The problem for one of the core's errors (its code, reason and message)."""
    reason = error.reason.value if error.reason is not None else None
    return Problem(STATUS[error.code], error.code.value, error.message, reason=reason)


def document(problem: Problem, instance: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE + problem.code,
        "title": TITLES.get(problem.code, problem.code.replace("_", " ").capitalize()),
        "status": problem.status,
        "detail": scrub(problem.detail),
        "instance": instance,
        "code": problem.code,
    }
    if problem.reason is not None:
        body["reason"] = problem.reason
    body.update(problem.extra)
    return body


def encode(problem: Problem, instance: str) -> bytes:
    return json.dumps(document(problem, instance), separators=(",", ":"), ensure_ascii=False).encode()


def scrub(text: str) -> str:
    """``text`` without lease tokens, API tokens or passwords (for problems and log lines)."""
    return _API_TOKEN.sub("<api token>", redact(text))
