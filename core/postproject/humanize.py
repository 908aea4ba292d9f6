"""Durations and times for people: one grammar and one format for the CLI and the monitor.

Grammar of a duration argument (``--lease``, ``--timeout``, the monitor's ``--timeout``): an
unsigned whole number of ASCII digits and a unit, ``us``, ``ms``, ``s``, ``m`` or ``h``, with
nothing around them (``250ms``, ``30s``, ``5m``, ``24h``). No sign, fraction, space, bare
number, ``ns`` or other digits than 0-9. :func:`parse_duration` checks the range too.

Format of a span of time: at most two units, the first as is and the second zero-padded to
two digits, the second left out when it is zero (``42s``, ``4m 05s``, ``3m``, ``2h 10m``,
``3d 04h``); below a second, ``250ms`` or ``7us``. Relative times are ``in 4m 05s`` and
``3m ago``; a lease that lapsed is ``expired 42s ago``. Instants are ``2026-01-01 12:03:04``
(local time in the monitor; with `` UTC`` on the command line, where output travels).

Pure: no clock is read here (callers pass ``now``).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta

from postproject.model.errors import InvalidArgumentError

__all__ = [
    "age",
    "clock_time",
    "coarse",
    "countdown",
    "format_duration",
    "parse_duration",
    "printable",
    "relative",
    "span",
    "stamp",
]

_GRAMMAR = re.compile(r"([0-9]{1,30})(us|ms|s|m|h)", re.ASCII)
_UNIT_MICROS = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000}
_SPAN_UNITS = (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))
_MICRO = timedelta(microseconds=1)


def parse_duration(text: str, *, field: str, minimum: timedelta, maximum: timedelta) -> timedelta:
    """The duration ``text`` spells (see the module docstring), within ``minimum``-``maximum``.

    Raises:
        InvalidArgumentError: (invalid_argument, also a ValueError) it does not parse or lies
            outside the range; the message names ``field``.
    """
    match = _GRAMMAR.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidArgumentError(
            f"{field} must be a whole number and a unit (us, ms, s, m or h), such as 30s or 5m; "
            f"got {str(text)[:40]!r}"
        )
    micros = int(match.group(1)) * _UNIT_MICROS[match.group(2)]
    if not minimum // _MICRO <= micros <= maximum // _MICRO:
        raise InvalidArgumentError(
            f"{field} must be between {format_duration(minimum)} and {format_duration(maximum)}; got {text!r}"
        )
    return timedelta(microseconds=micros)


def format_duration(duration: timedelta) -> str:
    """The shortest exact spelling in the grammar (``90s`` -> ``90s``, ``60s`` -> ``1m``)."""
    micros = duration // _MICRO
    for unit in ("h", "m", "s", "ms"):
        size = _UNIT_MICROS[unit]
        if micros and micros % size == 0:
            return f"{micros // size}{unit}"
    return f"{micros}us" if micros else "0s"


def span(duration: timedelta) -> str:
    """``42s``, ``4m 05s``, ``3m``, ``2h 10m``, ``3d 04h``, ``250ms``, ``7us`` (sign ignored)."""
    micros = abs(duration // _MICRO)
    if micros < 1_000_000:
        if micros >= 1000:
            return f"{micros // 1000}ms"
        return f"{micros}us" if micros else "0s"
    seconds = micros // 1_000_000
    for index, (unit, size) in enumerate(_SPAN_UNITS):
        if seconds >= size:
            first, rest = divmod(seconds, size)
            if unit == "s":
                return f"{first}s"
            small, small_size = _SPAN_UNITS[index + 1]
            second = rest // small_size
            return f"{first}{unit} {second:02d}{small}" if second else f"{first}{unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def coarse(duration: timedelta) -> str:
    """One unit, rounded down: ``42s``, ``3m``, ``2h``, ``4d`` (ages need no precision)."""
    seconds = abs(duration // _MICRO) // 1_000_000
    for unit, size in _SPAN_UNITS:
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return "0s"


def relative(when: datetime, now: datetime) -> str:
    """``in 4m 05s`` or ``3m ago``."""
    return f"in {span(when - now)}" if when > now else f"{span(now - when)} ago"


def age(then: datetime, now: datetime) -> str:
    """How long ago, in one unit: ``3m``."""
    return coarse(now - then)


def countdown(expires_at: datetime, now: datetime) -> str:
    """``in 2m 05s`` for a live lease; ``expired 42s ago`` for a lapsed one."""
    if expires_at > now:
        return f"in {span(expires_at - now)}"
    return f"expired {span(now - expires_at)} ago"


def stamp(when: datetime, *, utc: bool = False) -> str:
    """``2026-01-01 12:03:04`` in local time, or ``2026-01-01 11:03:04 UTC``."""
    if utc:
        return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


# Characters that steer a terminal or reorder text rather than show: C0 and C1 controls
# (escape sequences, bell, newline, tab), the bidirectional marks, embeddings, overrides and
# isolates (Trojan Source), the Unicode line and paragraph separators, and lone surrogates
# (a file name's undecodable bytes, which a terminal cannot show and ``print`` cannot encode).
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _steers(char: str) -> bool:
    return char in _BIDI or unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp")


def printable(text: str) -> str:
    """``text`` with every character that would steer a terminal escaped as ``\\xNN`` or
    ``\\uNNNN`` (``"bell\\a"`` -> ``"bell\\x07"``); anything else is left as it is."""
    if not any(_steers(char) for char in text):
        return text
    return "".join(_escape(char) if _steers(char) else char for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # the byte a surrogateescape decoding could not decode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clock_time(when: datetime) -> str:
    """Local time of day: ``12:03:04``."""
    return when.astimezone().strftime("%H:%M:%S")
