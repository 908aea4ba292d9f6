"""The one renderer: every byte the CLI writes to stdout or stderr goes through here.

With ``--json`` a command writes exactly one JSON document (``revisions follow`` writes one
JSON object per line). Without it, :mod:`postproject.cli.human` formats single objects as
``key: value`` blocks, lists as aligned tables, and times relative to now ("lease expires in
4m 12s"). No colour. Text for people never carries a character that steers a terminal
(escape sequences, bell, bidi overrides: :func:`postproject.humanize.printable`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from postproject import humanize
from postproject.cli import human


@dataclass(frozen=True, slots=True)
class Result:
    """What a command produced: its JSON document and how to show it to a person."""

    data: Mapping[str, Any]
    shape: str = "object"  # "job", "page:job", "revision", ... (see human.BLOCKS and human.TABLES)


class Renderer:
    """Writes results and errors as JSON or as text for people."""

    def __init__(self, *, json_mode: bool, now_micros: Callable[[], int]) -> None:
        self.json_mode = json_mode
        self._now = now_micros
        #: a production was read through a view that may be behind (``"possibly_stale": true``)
        self.possibly_stale = False

    def emit(self, result: Result) -> None:
        if self.json_mode:
            data = {**result.data, "possibly_stale": True} if self.possibly_stale else result.data
            _write(sys.stdout, json.dumps(data, indent=2) + "\n")
        else:
            _write(sys.stdout, self.human(result))

    def line(self, result: Result) -> None:
        """One streamed item (a JSON line, or one line of text), flushed at once."""
        if self.json_mode:
            text = json.dumps(result.data, separators=(",", ":"))
        else:
            text = human.revision_line(human.safe(result.data), self._now())
        _write(sys.stdout, text + "\n")
        sys.stdout.flush()

    def text(self, text: str) -> None:
        """Lines of a log for people, as they are except characters that would steer a
        terminal (escaped), flushed at once."""
        if text:
            _write(sys.stdout, "\n".join(humanize.printable(line) for line in text.split("\n")))
            sys.stdout.flush()

    def error(
        self,
        code: str,
        message: str,
        extra: Mapping[str, Any] | None = None,
        *,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """The error document (JSON mode) on stdout and always one human line on stderr.
        ``detail`` (``reason`` and the facts a reason carries) joins ``code`` and ``message``
        inside the ``error`` object."""
        one_line = humanize.printable(" ".join(message.split()))
        if self.json_mode:
            body = {"error": {"code": code, "message": one_line, **(detail or {})}, **(extra or {})}
            _write(sys.stdout, json.dumps(body, indent=2) + "\n")
        _write(sys.stderr, f"postproject: error: {one_line} ({code})\n")

    def note(self, message: str) -> None:
        """A human remark on stderr (never part of the JSON contract)."""
        _write(sys.stderr, "\n".join(humanize.printable(line) for line in message.split("\n")) + "\n")

    def human(self, result: Result) -> str:
        return human.render(result.data, result.shape, self._now())


def _write(stream: Any, text: str) -> None:
    stream.write(text)
