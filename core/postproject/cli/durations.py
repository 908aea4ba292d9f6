"""Duration arguments of the CLI, in the one grammar of :mod:`postproject.humanize`.

Lease durations must lie in 1 µs-24 h and wait timeouts in 0-60 s. Anything else is
invalid_argument, raised before any production is opened.
"""

from __future__ import annotations

from datetime import timedelta

from postproject import humanize

MAX_LEASE = timedelta(hours=24)
MAX_TIMEOUT = timedelta(seconds=60)
MAX_LEASE_MICROS = MAX_LEASE // timedelta(microseconds=1)
MAX_TIMEOUT_MICROS = MAX_TIMEOUT // timedelta(microseconds=1)


def parse_micros(text: str, *, field: str, minimum: int, maximum: int) -> int:
    """Microseconds of ``text``; invalid_argument unless it parses and lies in the range."""
    duration = humanize.parse_duration(
        text, field=field, minimum=timedelta(microseconds=minimum), maximum=timedelta(microseconds=maximum)
    )
    return duration // timedelta(microseconds=1)


def parse_lease(text: str) -> timedelta:
    """A lease duration: 1us to 24h."""
    return humanize.parse_duration(
        text, field="lease duration", minimum=timedelta(microseconds=1), maximum=MAX_LEASE
    )


def parse_timeout(text: str) -> timedelta:
    """A wait timeout: 0s (check once) to 60s."""
    return humanize.parse_duration(text, field="timeout", minimum=timedelta(0), maximum=MAX_TIMEOUT)


def format_micros(micros: int) -> str:
    """The shortest exact spelling in the grammar (``90000000`` -> ``90s``)."""
    return humanize.format_duration(timedelta(microseconds=micros))
