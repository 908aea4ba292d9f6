"""Bearer tokens, roles and the rate limit of failed authentications.

Every endpoint but health, readiness and the OpenAPI document depends on one of
:func:`require`'s guards: the ``Authorization: Bearer`` token is looked up in the production
(``production.access.token``: only its SHA-256 is stored) and its role checked. Without a
token, or with an unknown, revoked or expired one: ``401``. A role that may not: ``403``.
After ``auth_failures`` failures from one client address within ``auth_window`` seconds:
``429`` for every request of that address that needs a token, until the oldest failure
leaves the window (no lookup is made meanwhile).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from postproject.model import clock as clocks
from postproject.model.access import ApiRole
from postproject.service.handles import Handles
from postproject.service.problems import Problem

MAX_ADDRESSES = 10_000  # client addresses whose failures are remembered at once
# Which roles each guard admits: reader < submitter < supervisor; worker stands apart.
ADMITS: dict[ApiRole, frozenset[ApiRole]] = {
    ApiRole.READER: frozenset({ApiRole.READER, ApiRole.SUBMITTER, ApiRole.SUPERVISOR}),
    ApiRole.SUBMITTER: frozenset({ApiRole.SUBMITTER, ApiRole.SUPERVISOR}),
    ApiRole.SUPERVISOR: frozenset({ApiRole.SUPERVISOR}),
    ApiRole.WORKER: frozenset({ApiRole.WORKER}),
}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts for: the token's name (the revisions' ``principal``) and its role."""

    name: str
    role: ApiRole

    @property
    def supervises(self) -> bool:
        return self.role is ApiRole.SUPERVISOR


class FailureLimit:
    """Failed authentications per client address in a sliding window."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._failures: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()

    def check(self, address: str) -> None:
        """``429`` while ``address`` has used up its failures in the window."""
        failures = self._recent(address)
        if failures is not None and len(failures) >= self.limit:
            wait = max(1, math.ceil(failures[0] + self.window - clocks.monotonic()))
            raise Problem(
                429,
                "rate_limited",
                f"too many failed authentications from this address; retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, address: str) -> None:
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


class Authenticator:
    """Looks tokens up in the production and counts failures (one per instance)."""

    def __init__(self, handles: Handles, limit: FailureLimit) -> None:
        self._handles = handles
        self._limit = limit

    async def principal(self, request: Request) -> Principal:
        address = request.client.host if request.client else "-"
        self._limit.check(address)
        scheme, _, secret = request.headers.get("authorization", "").partition(" ")
        token = None
        if scheme.lower() == "bearer" and secret.strip():
            given = secret.strip()
            token = await self._handles.run(lambda production: production.access.token(given))
        if token is None:
            self._limit.failed(address)
            raise Problem(
                401,
                "unauthenticated",
                "a valid API token is needed: Authorization: Bearer TOKEN (unknown, revoked and "
                "expired tokens are refused)",
                headers={"WWW-Authenticate": 'Bearer realm="postproject"'},
            )
        request.state.principal = token.name
        return Principal(token.name, token.role)


def require(role: ApiRole) -> Callable[[Request], Awaitable[Principal]]:
    """A FastAPI dependency: the request's principal, if its role may act as ``role``."""
    admitted = ADMITS[role]

    async def guard(request: Request) -> Principal:
        authenticator: Authenticator = request.app.state.authenticator
        principal = await authenticator.principal(request)
        if principal.role not in admitted:
            raise Problem(
                403,
                "forbidden",
                f"a {principal.role.value} token may not do this (it needs a "
                f"{' or '.join(sorted(r.value for r in admitted))} token)",
            )
        return principal

    guard.__name__ = f"require_{role.value}"
    return guard
