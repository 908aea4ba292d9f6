"""Log lines never carry a lease token or a password; JSON lines are one object each."""

from __future__ import annotations

import io
import json
import logging

import pytest
from rich.console import Console

from postproject.cli.executor import _say
from postproject.logs import JsonFormatter, redact, secret_free

TOKEN = "ppl1:01a2322d-0b63-7186-b950-4d95d4764bba:01a2322d-0b63-7186-b950-4d95d4764bbb:5f0e1c2a-9b1d-4c1e-8f0a-2b3c4d5e6f70"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"renew failed for {TOKEN} (expired)", "renew failed for <lease token> (expired)"),
        ("postgresql://render:s3cr3t@db.studio:5432/shows", "postgresql://render:***@db.studio:5432/shows"),
        ("host=db user=render password=s3cr3t dbname=shows", "host=db user=render password=*** dbname=shows"),
        ("PASSWORD='two words' sslmode=require", "PASSWORD=*** sslmode=require"),
        ("nothing secret here: 3 jobs", "nothing secret here: 3 jobs"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("json_lines", [False, True])
def test_no_handler_output_carries_a_secret(json_lines: bool) -> None:
    stream = io.StringIO()
    handler = secret_free(logging.StreamHandler(stream))
    handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter("%(message)s"))
    logger = logging.getLogger("tests.logs.secret")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("lease %s lost", TOKEN, extra={"detail": f"token {TOKEN}"})
        try:
            raise RuntimeError(f"cannot connect to postgresql://u:hunter2@h/db with {TOKEN}")
        except RuntimeError:
            logger.exception("connection failed (password=hunter2)")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "hunter2" not in text and "ppl1:" not in text and "5f0e1c2a" not in text
    assert "<lease token>" in text and "***" in text
    if json_lines:
        records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        assert records[0]["detail"] == "token <lease token>"
        assert "RuntimeError" in records[1]["traceback"]


def test_install_hints_keep_their_brackets() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    _say(console, "The monitor needs the GUI extra: pip install 'postproject-monitor[gui]'.")
    assert "pip install 'postproject-monitor[gui]'." in out.getvalue()
    _say(console, "asset \x1b[2Jname\x07")
    assert "\\x1b[2Jname\\x07" in out.getvalue()
