"""Bearer tokens, roles and the rate limit of failed authentications.

Every endpoint but health, readiness and the OpenAPI document depends on one of
:func:`require`'s guards: the ``Authorization: Bearer`` token is looked up in the production
(``production.access.token``: only its SHA-256 is stored) and its role checked, in the worker
thread of the request's first core call (:class:`Principal`). Without a token, or with an
unknown, revoked or expired one: ``401``. A role that may not: ``403``.
After ``auth_failures`` failures from one client address within ``auth_window`` seconds:
``429`` for every request of that address that needs a token, until the oldest failure
leaves the window (no lookup is made meanwhile).
"""

from __future__ import annotations

import collections
import math
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request

from postproject.model import clock as clocks
from postproject.model.access import ApiRole, looks_like_secret, secret_hash
from postproject.production import Production
from postproject.service.problems import Problem

MAX_ADDRESSES = 10_000  # client addresses whose failures are remembered at once
# Which roles each guard admits: reader < submitter < supervisor; worker stands apart.
ADMITS: dict[ApiRole, frozenset[ApiRole]] = {
    ApiRole.READER: frozenset({ApiRole.READER, ApiRole.SUBMITTER, ApiRole.SUPERVISOR}),
    ApiRole.SUBMITTER: frozenset({ApiRole.SUBMITTER, ApiRole.SUPERVISOR}),
    ApiRole.SUPERVISOR: frozenset({ApiRole.SUPERVISOR}),
    ApiRole.WORKER: frozenset({ApiRole.WORKER}),
}


class Principal:
    """Who a request acts for: the token's name (its revisions' ``principal``) and its role.

    The guard (:func:`require`) checks what costs nothing (the address's failures, the
    header's shape); the token is looked up by :meth:`resolve` in the worker thread of the
    request's first core call, on that call's production handle (one thread hop and one
    handle per request, not two). Until then ``name`` and ``role`` are unset.
    """

    __slots__ = ("_roles", "_secret", "_state", "address", "admitted", "limit", "name", "role")

    def __init__(
        self,
        secret: str,
        admitted: frozenset[ApiRole],
        address: str,
        limit: FailureLimit,
        roles: KnownRoles,
        state: Any,
    ) -> None:
        self._secret = secret
        self._roles = roles
        self._state = state
        self.address = address
        self.admitted = admitted
        self.limit = limit
        self.name = ""
        self.role: ApiRole | None = None

    @property
    def supervises(self) -> bool:
        return self.role is ApiRole.SUPERVISOR

    def resolve(self, production: Production) -> None:
        """Look the token up (once): ``401`` unless it is active, ``403`` unless its role may."""
        if self.role is not None:
            return
        token = production.access.token(self._secret)
        if token is None:
            self.limit.failed(self.address)
            raise unauthenticated()
        self._state.principal = token.name  # the access log's
        self._roles.learn(self._secret, token.role)
        if token.role not in self.admitted:
            raise forbidden(token.role, self.admitted)
        self.name, self.role = token.name, token.role


def forbidden(role: ApiRole, admitted: frozenset[ApiRole]) -> Problem:
    needs = " or ".join(sorted(r.value for r in admitted))
    return Problem(403, "forbidden", f"a {role.value} token may not do this (it needs a {needs} token)")


class KnownRoles:
    """The role of each token seen lately (by its hash): a token's role never changes, so the
    guard refuses a role that may not (``403``) before the request is read any further; the
    token itself is still looked up with the request's core call (it may be revoked)."""

    def __init__(self) -> None:
        self._roles: collections.OrderedDict[bytes, ApiRole] = collections.OrderedDict()
        self._lock = threading.Lock()

    def hint(self, secret: str) -> ApiRole | None:
        with self._lock:
            return self._roles.get(secret_hash(secret))

    def learn(self, secret: str, role: ApiRole) -> None:
        with self._lock:
            self._roles[secret_hash(secret)] = role
            while len(self._roles) > MAX_ADDRESSES:
                self._roles.popitem(last=False)


def unauthenticated() -> Problem:
    return Problem(
        401,
        "unauthenticated",
        "a valid API token is needed: Authorization: Bearer TOKEN (unknown, revoked and "
        "expired tokens are refused)",
        headers={"WWW-Authenticate": 'Bearer realm="postproject"'},
    )


class FailureLimit:
    """Failed authentications per client address in a sliding window."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._failures: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()
        self._lock = threading.Lock()  # failures are counted in worker threads too

    def check(self, address: str) -> None:
        """``429`` while ``address`` has used up its failures in the window."""
        with self._lock:
            failures = self._recent(address)
            used_up = failures is not None and len(failures) >= self.limit
            oldest = failures[0] if failures else 0.0
        if used_up:
            wait = max(1, math.ceil(oldest + self.window - clocks.monotonic()))
            raise Problem(
                429,
                "rate_limited",
                f"too many failed authentications from this address; retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, address: str) -> None:
        with self._lock:
            failures = self._recent(address)
            if failures is None:
                failures = self._failures[address] = collections.deque()
                while len(self._failures) > MAX_ADDRESSES:
                    self._failures.popitem(last=False)
            failures.append(clocks.monotonic())

    def _recent(self, address: str) -> collections.deque[float] | None:
        failures = self._failures.get(address)
        if failures is None:
            return None
        horizon = clocks.monotonic() - self.window
        while failures and failures[0] <= horizon:
            failures.popleft()
        if not failures:
            del self._failures[address]
            return None
        self._failures.move_to_end(address)
        return failures


def require(role: ApiRole) -> Callable[[Request], Awaitable[Principal]]:
    """A FastAPI dependency: the request's principal, to be resolved with its first core call
    (``Handles.run(..., principal=)``) as one that may act as ``role``."""
    admitted = ADMITS[role]

    async def guard(request: Request) -> Principal:
        limit: FailureLimit = request.app.state.failures
        address = request.client.host if request.client else "-"
        limit.check(address)
        scheme, _, secret = request.headers.get("authorization", "").partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not looks_like_secret(secret):
            limit.failed(address)
            raise unauthenticated()
        roles: KnownRoles = request.app.state.roles
        known = roles.hint(secret)
        if known is not None and known not in admitted:
            raise forbidden(known, admitted)
        return Principal(secret, admitted, address, limit, roles, request.state)

    guard.__name__ = f"require_{role.value}"
    return guard
