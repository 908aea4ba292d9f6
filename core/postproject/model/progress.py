"""Live progress of a running attempt, and each attempt's log.

Progress is stored state, not a revision: a report replaces the running attempt's latest
progress (a field left ``None`` keeps its previous value), and followers learn of reports
through a coalesced progress signal (at most one per attempt per second), never through
the revision feed. An attempt's log tail is at most :data:`MAX_LOG_TAIL_BYTES` of valid
UTF-8, recorded when the attempt ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import PurePath

from postproject.model import names
from postproject.model.errors import InvalidArgumentError

MAX_PROGRESS_TEXT_BYTES = 1024  # a stage or a message
MAX_LOG_TAIL_BYTES = 64 * 1024
MAX_LOG_PATH_BYTES = 4096
SIGNAL_EVERY = timedelta(seconds=1)  # at most one progress signal per attempt per second


@dataclass(frozen=True, slots=True)
class JobProgress:
    """The latest progress an attempt reported: a fraction done (0-1), a stage ("decode",
    "encode", "publish", ...), a human message, and when it was reported."""

    fraction: float | None
    stage: str | None
    message: str | None
    updated_at: datetime

    def remaining(self, started_at: datetime) -> timedelta | None:
        """Time left if the rest goes as fast as the part done since ``started_at`` (None
        when it cannot be told yet)."""
        if self.fraction is None or self.fraction <= 0.0:
            return None
        spent = self.updated_at - started_at
        if spent <= timedelta(0):
            return None
        return spent * ((1.0 - self.fraction) / self.fraction)


@dataclass(frozen=True, slots=True)
class AttemptLog:
    """An attempt's log: where the full log lives and its stored tail (None until it ended)."""

    attempt: int  # the attempt's number
    root: str | None  # the media root ``path`` is under (None: an absolute path)
    path: PurePath | None
    tail: str | None
    tail_at: datetime | None


def check_fraction(value: object) -> float | None:
    """A progress fraction: None, or a finite number from 0 to 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(
            f"progress fraction must be a number from 0 to 1; got {type(value).__name__}"
        )
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidArgumentError(f"progress fraction must be a number from 0 to 1; got {value!r}")
    return number


def check_text(field: str, value: object) -> str | None:
    """A progress stage or message: None, or 1-1024 UTF-8 bytes without NUL."""
    if value is None:
        return None
    return names.bounded_text(field, value, MAX_PROGRESS_TEXT_BYTES)


def log_tail(text: str | bytes, limit: int = MAX_LOG_TAIL_BYTES) -> str:
    """The last ``limit`` bytes of a log as valid UTF-8 (whole characters; bytes that are not
    UTF-8, lone surrogates and NUL become U+FFFD), cut at a line start when one is near."""
    if isinstance(text, bytes):
        data = text
    elif isinstance(text, str):
        data = _encoded(text)
    else:
        raise InvalidArgumentError(f"log tail must be text or bytes; got {type(text).__name__}")
    if len(data) > limit * 2:
        data = data[-limit * 2 :]  # decoding never grows text past 3x; keep work bounded
    clean = data.decode("utf-8", "replace").replace("\x00", "\ufffd")
    encoded = clean.encode("utf-8")
    if len(encoded) <= limit:
        return clean
    cut = encoded[-limit:].decode("utf-8", "ignore")  # drops a character split at the cut
    newline = cut.find("\n")
    if 0 <= newline < 4096 and newline + 1 < len(cut):
        cut = cut[newline + 1 :]
    return cut


def _encoded(text: str) -> bytes:
    """UTF-8 of ``text``; bytes a file name or a tool smuggled in as lone surrogates come back
    as themselves (``surrogateescape``), any other lone surrogate as bytes ``replace`` drops."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
