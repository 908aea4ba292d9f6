"""``postproject config show``: the effective settings and where each came from."""

from __future__ import annotations

import argparse
from typing import Any

from postproject import locations
from postproject.cli.common import Context, Parser, command, group
from postproject.cli.output import Result


def _value(key: str, value: Any) -> Any:
    if key == "production" and isinstance(value, str):
        return locations.display_location(value)  # never its password
    return list(value) if isinstance(value, tuple) else value


def config_show(ctx: Context) -> Result:
    config = ctx.config()
    items = [
        {"key": s.key, "value": _value(s.key, s.value), "source": s.source, "origin": s.origin}
        for s in config.settings()
    ]
    document = {"file": {"path": str(config.path), "exists": config.file_exists}, "items": items}
    return Result(document, "config")


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    config = group(sub, "config", "show the configuration (file, environment, flags)")
    about = "print every effective setting and where it came from (flag, env, file or default)"
    command(config, "show", about, config_show, production=False)
