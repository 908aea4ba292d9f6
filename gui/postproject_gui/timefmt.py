"""Compact, human time texts for a dense table: ages, countdowns, durations. Qt-free."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_DURATION = re.compile(r"([0-9]+)(us|ms|s|m|h)")
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def span(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 10m``, ``4d 3h``: two units at most."""
    total = int(abs(seconds))
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"


def coarse(seconds: float) -> str:
    """One unit: ``42s``, ``3m``, ``2h``, ``4d`` (for ages, which need no precision)."""
    total = int(abs(seconds))
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m"
    if total < 48 * 3600:
        return f"{total // 3600}h"
    return f"{total // 86400}d"


def age(then: datetime, now: datetime) -> str:
    return coarse((now - then).total_seconds())


def countdown(expires_at: datetime, now: datetime) -> str:
    """``in 2m 05s`` for a live lease; ``expired 42s ago`` or ``expired 7m ago`` for a lapsed one."""
    left = (expires_at - now).total_seconds()
    if left > 0:
        return f"in {span(left)}"
    return f"expired {span(-left) if left > -60 else coarse(-left)} ago"


def stamp(when: datetime) -> str:
    """Local date and time to the second, ISO-like: ``2026-01-01 12:03:04``."""
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def clock_time(when: datetime) -> str:
    """Local time of day: ``12:03:04``."""
    return when.astimezone().strftime("%H:%M:%S")


def parse_duration(text: str) -> timedelta:
    """Parse the CLI's durations: ``250ms``, ``30s``, ``5m``, ``1h`` (ValueError otherwise)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise ValueError(f"duration must look like 250ms, 30s, 5m or 1h; got {text!r}")
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
