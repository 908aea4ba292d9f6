"""Log lines that never carry a secret, as text or as one JSON object per line.

:class:`RedactingFilter` rewrites every record that passes a handler: lease tokens
(``ppl1:...``), the password of a URL (``postgresql://user:secret@host``) and
``password=...`` pairs (libpq connection strings) are replaced before any formatter sees the
message, its arguments or its traceback. Attach it to every handler that leaves the process
(:func:`secret_free`); the executor's console and JSON lines and the monitor's log file do.

:class:`JsonFormatter` writes one JSON object per record: ``time`` (UTC, ISO 8601),
``level``, ``logger``, ``message`` and the structured fields a record carries (``action``,
``job``, ``attempt``, ``worker``, ...).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any, Final

__all__ = ["STRUCTURED_FIELDS", "JsonFormatter", "RedactingFilter", "redact", "secret_free"]

_TOKEN: Final = re.compile(r"ppl1:\S*")
_URL_PASSWORD: Final = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s@/]*(?=@)")
_PAIR_PASSWORD: Final = re.compile(
    r"(?P<head>\b(?:password|passwd|pwd|secret|token)\s*[=:]\s*)(?:'[^']*'|\"[^\"]*\"|[^\s,;&]+)",
    re.IGNORECASE,
)
REDACTED: Final = "***"

# Record attributes that JsonFormatter copies into each line when present (``extra=``).
STRUCTURED_FIELDS: Final = ("action", "job", "job_id", "attempt", "worker", "production", "detail")


def redact(text: str) -> str:
    """``text`` without lease tokens, URL passwords or ``password=`` values."""
    text = _TOKEN.sub("<lease token>", text)
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED, text)
    return _PAIR_PASSWORD.sub(lambda m: m.group("head") + REDACTED, text)


class RedactingFilter(logging.Filter):
    """Replaces a record's message (and formatted traceback) by its redacted text."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = redact(record.getMessage())
        record.msg, record.args = message, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for name in STRUCTURED_FIELDS:
            value = getattr(record, name, None)
            if isinstance(value, str):
                setattr(record, name, redact(value))
        return True


def secret_free(handler: logging.Handler) -> logging.Handler:
    """``handler`` with a :class:`RedactingFilter` (returned for chaining)."""
    if not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(RedactingFilter())
    return handler


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in STRUCTURED_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["traceback"] = record.exc_text
        return json.dumps(line, separators=(",", ":"), default=str)
