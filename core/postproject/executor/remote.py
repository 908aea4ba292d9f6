"""The service's HTTP client: one place that speaks to ``postproject serve`` (httpx).

:class:`ServiceClient` sends JSON requests with the bearer token and turns every answer that
is not a success back into the core's errors, so callers (the HTTP worker, the CLI's client
commands) handle one error tree on both transports, and the CLI prints and exits as it does
on a production:

- a problem document (RFC 9457) with one of the core's codes becomes that code's error, with
  its ``reason`` when the core knows it, and the problem's ``detail`` as its message;
- ``401`` (a missing, unknown, revoked or expired token) is ``storage`` with reason
  ``auth_failed`` and ``403`` ``storage`` / ``permission_denied``, as a database refuses
  credentials or a privilege (exit status 7);
- a transport failure, a ``429`` and a ``502``/``503``/``504`` are
  :class:`~postproject.executor.recovery.ServiceUnavailable` (transient; ``sent`` tells a
  request that may have taken effect from one that cannot have).

The token (:func:`postproject.executor.access.read_token`) travels only in the
``Authorization`` header; a lease token only in request bodies. No error message carries
either. This module imports httpx: front ends reach it through
:func:`postproject.executor.access.connect`, which names the missing extra instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import httpx

from postproject._version import __version__
from postproject.executor.access import is_service_url
from postproject.executor.recovery import ServiceUnavailable
from postproject.logs import redact
from postproject.model.errors import (
    ERROR_CLASSES,
    ErrorCode,
    InternalError,
    InvalidArgumentError,
    PostProjectError,
    Reason,
    StorageError,
)

CONNECT_TIMEOUT: Final = 5.0
REQUEST_TIMEOUT: Final = 45.0  # the service's own limit is 30 s; a held claim waits at most 30 s
_KNOWN_REASONS: Final = frozenset(r.value for r in Reason)


@dataclass(frozen=True, slots=True)
class Answer:
    """A successful answer: its status, its JSON body (None for 204) and its headers."""

    status: int
    body: Any
    headers: httpx.Headers


class ServiceClient:
    """Requests to one service with one token; safe to share between threads."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = REQUEST_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        max_connections: int = 64,
    ) -> None:
        if not is_service_url(url):
            raise InvalidArgumentError(f"a service URL starts with http:// or https://; got {url[:200]!r}")
        self.url = url.rstrip("/")
        try:
            parsed = httpx.URL(self.url)
        except (httpx.InvalidURL, ValueError) as exc:
            raise InvalidArgumentError(f"not a usable service URL: {redact(str(exc))[:200]}") from None
        if not parsed.host:
            raise InvalidArgumentError(f"the service URL names no host: {self.url[:200]!r}")
        self._client = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "User-Agent": f"postproject/{__version__}"},
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            transport=transport,
            follow_redirects=False,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """Send one request; the answer of a 2xx, else the matching error (module docstring)."""
        content = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        sent_headers = {"Content-Type": "application/json"} if content is not None else {}
        sent_headers.update(headers or {})
        extra: dict[str, Any] = {}
        if timeout is not None:
            extra["timeout"] = httpx.Timeout(timeout, connect=CONNECT_TIMEOUT)
        try:
            response = self._client.request(
                method, path, content=content, params=_params(params), headers=sent_headers, **extra
            )
        except httpx.TransportError as exc:
            raise _transport_error(self.url, exc) from None
        return _answer(self.url, response)

    @contextmanager
    def stream(
        self, path: str, *, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> Iterator[Iterator[str]]:
        """A streamed GET (Server-Sent Events): its lines, as they arrive."""
        try:
            with self._client.stream(
                "GET", path, params=_params(params), headers=dict(headers or {}),
                timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT, read=60.0),
            ) as response:  # fmt: skip
                if response.status_code != 200:
                    response.read()
                    _answer(self.url, response)
                    raise InternalError(f"unexpected answer {response.status_code} from {self.url}")
                yield _lines(self.url, response)
        except httpx.TransportError as exc:
            raise _transport_error(self.url, exc) from None


def _lines(url: str, response: httpx.Response) -> Iterator[str]:
    try:
        yield from response.iter_lines()
    except httpx.TransportError as exc:
        raise _transport_error(url, exc) from None


def _params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not params:
        return None
    return {k: v for k, v in params.items() if v is not None}


def _transport_error(url: str, error: httpx.TransportError) -> ServiceUnavailable:
    """A transport failure: ``sent`` unless the request certainly never left (no connection)."""
    unsent = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))
    what = type(error).__name__
    detail = redact(str(error))[:300] or what
    reason = Reason.UNREACHABLE if unsent else Reason.CONNECTION_LOST
    return ServiceUnavailable(
        f"the service at {url} did not answer ({what}: {detail})", reason=reason, sent=not unsent
    )


def _answer(url: str, response: httpx.Response) -> Answer:
    status = response.status_code
    if 200 <= status < 300:
        body = response.json() if status != 204 and response.content else None
        return Answer(status, body, response.headers)
    raise problem_error(url, response)


def problem_error(url: str, response: httpx.Response) -> PostProjectError:
    """The core's error for an answer that is not a success (see the module docstring)."""
    status = response.status_code
    problem: dict[str, Any] = {}
    try:
        parsed = response.json()
        if isinstance(parsed, dict):
            problem = parsed
    except ValueError:
        pass
    code = str(problem.get("code") or "")
    raw_reason = problem.get("reason")
    reason = Reason(raw_reason) if isinstance(raw_reason, str) and raw_reason in _KNOWN_REASONS else None
    detail = problem.get("detail")
    message = redact(str(detail)) if isinstance(detail, str) and detail else f"HTTP {status} from {url}"
    retry_after = _retry_after(response.headers.get("Retry-After"))
    if status == 401:
        return StorageError(f"the service refused the API token: {message}", reason=Reason.AUTH_FAILED)
    if status == 403:
        return StorageError(
            f"the API token's role may not do that: {message}", reason=Reason.PERMISSION_DENIED
        )
    if status == 429 or status in (502, 503, 504):
        sent = status in (502, 504) or reason is Reason.CONNECTION_LOST
        lost = Reason.BUSY if status == 429 or reason is Reason.BUSY else reason or Reason.UNREACHABLE
        return ServiceUnavailable(
            f"the service at {url} cannot answer now: {message}",
            reason=lost,
            sent=sent,
            retry_after=retry_after,
            status=status,
            problem=problem or None,
        )
    known = {c.value: c for c in ErrorCode}
    if code in known:
        return ERROR_CLASSES[known[code]](message, reason=reason)
    if status == 404:
        return ERROR_CLASSES[ErrorCode.NOT_FOUND](message)
    if status in (400, 413, 415, 422):
        return InvalidArgumentError(message)
    return InternalError(f"unexpected answer {status} from {url}: {message[:300]}")


def _retry_after(value: str | None) -> float | None:
    if value is None or not value.strip().isdigit():
        return None
    return float(min(int(value.strip()), 300))
