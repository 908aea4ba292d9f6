"""The monitor's time texts: the core's one human format (:mod:`postproject.humanize`).

Kept as the monitor's import point so every view formats ages, countdowns and instants the
same way as the command line does; nothing here formats on its own.
"""

from __future__ import annotations

from postproject.humanize import age, clock_time, coarse, countdown, relative, span, stamp

__all__ = ["age", "clock_time", "coarse", "countdown", "relative", "span", "stamp"]
