"""Duration arguments: an unsigned whole number and a unit, such as ``250ms`` or ``5m``.

Grammar: ``[0-9]+(us|ms|s|m|h)``; no sign, fraction, space, bare number or ``ns``. Lease
durations must lie in 1 µs-24 h and wait timeouts in 0-60 s. Anything else is
invalid_argument, raised before any production is opened.
"""

from __future__ import annotations

import re
from datetime import timedelta

from postproject.errors import InvalidArgumentError

_GRAMMAR = re.compile(r"([0-9]{1,30})(us|ms|s|m|h)")
_UNIT_MICROS = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000}
MAX_LEASE_MICROS = 24 * 3_600_000_000
MAX_TIMEOUT_MICROS = 60_000_000


def parse_micros(text: str, *, field: str, minimum: int, maximum: int) -> int:
    """Microseconds of ``text``; invalid_argument unless it parses and lies in the range."""
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        raise InvalidArgumentError(
            f"{field} must be a whole number and a unit (us, ms, s, m or h), such as 30s or 5m; "
            f"got {text[:40]!r}"
        )
    micros = int(match.group(1)) * _UNIT_MICROS[match.group(2)]
    if not minimum <= micros <= maximum:
        raise InvalidArgumentError(
            f"{field} must be between {format_micros(minimum)} and {format_micros(maximum)}; got {text!r}"
        )
    return micros


def parse_lease(text: str) -> timedelta:
    """A lease duration: 1us to 24h."""
    micros = parse_micros(text, field="lease duration", minimum=1, maximum=MAX_LEASE_MICROS)
    return timedelta(microseconds=micros)


def parse_timeout(text: str) -> timedelta:
    """A wait timeout: 0s (check once) to 60s."""
    micros = parse_micros(text, field="timeout", minimum=0, maximum=MAX_TIMEOUT_MICROS)
    return timedelta(microseconds=micros)


def format_micros(micros: int) -> str:
    """The shortest exact spelling in the grammar (``90000000`` -> ``90s``)."""
    for unit in ("h", "m", "s", "ms"):
        size = _UNIT_MICROS[unit]
        if micros and micros % size == 0:
            return f"{micros // size}{unit}"
    return f"{micros}us" if micros else "0s"
