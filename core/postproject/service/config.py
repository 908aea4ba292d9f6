"""What ``postproject serve`` is told: where the production is, where to listen, and its limits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from postproject.model.errors import InvalidArgumentError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8470
REQUEST_TIME_LIMIT = 30.0  # seconds a request's core call may take (and a PostgreSQL statement)
MAX_BODY_BYTES = 256 * 1024
MAX_JSON_DEPTH = 32
MAX_STREAMS = 256
KEEP_ALIVE_SECONDS = 15.0
STREAM_CLOSE_SECONDS = 5.0  # a shutdown ends every event stream within this
MAX_WAIT_SECONDS = 30
SWEEP_INTERVAL = 5.0
SWEEP_BATCH = 100
AUTH_FAILURES = 20  # failed authentications per client address ...
AUTH_WINDOW = 60.0  # ... within this many seconds, then 429 until the window passes
DRAIN_SECONDS = 35.0  # how long a shutdown waits for requests in flight (a claim waits up to 30 s)
_LISTEN = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>[0-9]{1,5})")


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """One service instance over one production."""

    location: str  # a .pproj path or a postgresql:// URI
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    sweep: bool = True
    pool_size: int = 4  # production handles (a handle is one edit at a time): the bound on connections
    root_map: dict[str, str] = field(default_factory=dict)
    cors_origins: tuple[str, ...] = ()
    auth_failures: int = AUTH_FAILURES
    auth_window: float = AUTH_WINDOW
    time_limit: float = REQUEST_TIME_LIMIT
    max_streams: int = MAX_STREAMS
    keep_alive: float = KEEP_ALIVE_SECONDS
    sweep_interval: float = SWEEP_INTERVAL


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8470`` for IPv6) -> (host, port)."""
    match = _LISTEN.fullmatch(text)
    port = int(match.group("port")) if match else 0
    if match is None or not 1 <= port <= 65535:
        raise InvalidArgumentError(f"--listen takes HOST:PORT (e.g. 127.0.0.1:8470); got {text[:80]!r}")
    host = match.group("v6") or match.group("host") or DEFAULT_HOST
    return host, port


def with_statement_timeout(location: str, seconds: float) -> str:
    """A ``postgresql://`` location whose connections set ``statement_timeout`` (libpq's
    ``options``, added to any the URI has); a file path unchanged."""
    if not location.startswith(("postgresql://", "postgres://")):
        return location
    setting = f"-c statement_timeout={int(seconds * 1000)}"
    base, _, query = location.partition("?")
    pairs = [pair for pair in query.split("&") if pair]
    for index, pair in enumerate(pairs):
        key, _, value = pair.partition("=")
        if unquote(key) == "options":
            pairs[index] = f"options={quote(unquote(value) + ' ' + setting, safe='')}"
            break
    else:
        pairs.append(f"options={quote(setting, safe='')}")
    return f"{base}?{'&'.join(pairs)}"
