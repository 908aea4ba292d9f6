"""Settings from a TOML file and ``POSTPROJECT_*`` environment variables, with their sources.

One file, ``config.toml`` in the user's configuration directory (platformdirs: on Linux
``$XDG_CONFIG_HOME/postproject/config.toml``, usually ``~/.config/postproject/``; the
``POSTPROJECT_CONFIG`` variable names another file). The CLI, the reference executor and the
monitor read it through :func:`load`. Each setting's value comes from the first of: a
command-line flag, an environment variable, the file, the built-in default;
:meth:`Config.settings` tells which (``postproject config show``). The format is documented
in ``docs/configuration.md``:

.. code-block:: toml

    production = "/studio/shows/harbour/show.pproj"   # used when a command names none

    [root_map]                                         # this machine's media roots
    media = "/Volumes/media"
    proxies = "/Volumes/proxies"

    [worker]
    concurrency = 2
    lease = "2m"

    [monitor]
    theme = "dark"

A bad file, key or value is ``invalid_argument`` naming the file (or variable) and the key.
Pure of any production: nothing here opens one.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

import platformdirs

from postproject import humanize
from postproject.model import names
from postproject.model.errors import InvalidArgumentError

__all__ = ["APP_NAME", "ENV_PREFIX", "Config", "Setting", "config_path", "load", "log_dir"]

APP_NAME: Final = "postproject"
ENV_PREFIX: Final = "POSTPROJECT_"
CONFIG_ENV: Final = "POSTPROJECT_CONFIG"
ROOT_MAP_ENV: Final = "POSTPROJECT_ROOT_MAP"
WORKER_KINDS: Final = ("generate-proxy", "generate-thumbnail")

Parser = Callable[[str, object], Any]


@dataclass(frozen=True, slots=True)
class Setting:
    """One effective setting: its value and where it came from.

    ``source`` is ``default``, ``file``, ``env`` or ``flag``; ``origin`` names the file, the
    variable or the option (None for a default).
    """

    key: str
    value: Any
    source: str
    origin: str | None = None


# --- value parsers: (what, raw value) -> value; raw is text (env, flags) or TOML -----------


def _whole(low: int, high: int) -> Parser:
    def parse(what: str, raw: object) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str) and re.fullmatch(r"[0-9]{1,6}", raw, re.ASCII):
            value = int(raw)
        else:
            value = low - 1
        if not low <= value <= high:
            raise InvalidArgumentError(f"{what} must be a whole number from {low} to {high}; got {raw!r:.60}")
        return value

    return parse


def _choice(*options: str) -> Parser:
    def parse(what: str, raw: object) -> str:
        if raw not in options:
            raise InvalidArgumentError(f"{what} must be one of {', '.join(options)}; got {raw!r:.60}")
        return str(raw)

    return parse


def _duration(minimum: timedelta, maximum: timedelta) -> Parser:
    def parse(what: str, raw: object) -> str:
        if not isinstance(raw, str):
            raise InvalidArgumentError(f"{what} must be a duration such as 60s or 5m; got {raw!r:.60}")
        humanize.parse_duration(raw, field=what, minimum=minimum, maximum=maximum)
        return raw

    return parse


def _text(what: str, raw: object) -> str:
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        raise InvalidArgumentError(f"{what} must be non-empty text; got {raw!r:.60}")
    return raw


def _bool(what: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = raw.strip().lower() if isinstance(raw, str) else None
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise InvalidArgumentError(f"{what} must be true or false; got {raw!r:.60}")


def _kinds(what: str, raw: object) -> tuple[str, ...]:
    items = [k.strip() for k in raw.split(",")] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)) or not items:
        raise InvalidArgumentError(f"{what} must be a list of job kinds; got {raw!r:.60}")
    for item in items:
        if not isinstance(item, str) or not item:
            raise InvalidArgumentError(f"{what} must be a list of job kinds; got {raw!r:.60}")
    return tuple(items)


# key -> (parser, default)
SCHEMA: Final[Mapping[str, tuple[Parser, Any]]] = {
    "production": (_text, None),
    "worker.concurrency": (_whole(1, 16), 1),
    "worker.lease": (_duration(timedelta(microseconds=1), timedelta(hours=24)), "60s"),
    "worker.kinds": (_kinds, WORKER_KINDS),
    "worker.tool_name": (_text, None),
    "worker.agent_name": (_text, None),
    "worker.proxy_format": (_choice("mp4", "mov"), "mp4"),
    "worker.thumbnail_format": (_choice("jpg", "png"), "jpg"),
    "worker.log_format": (_choice("text", "json"), "text"),
    "monitor.theme": (_choice("system", "light", "dark"), None),
    "monitor.verbose": (_bool, False),
    "monitor.log_file": (_text, None),
}


def env_name(key: str) -> str:
    """``worker.concurrency`` -> ``POSTPROJECT_WORKER_CONCURRENCY``."""
    return ENV_PREFIX + key.replace(".", "_").upper()


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The configuration file: ``$POSTPROJECT_CONFIG``, else the user's config directory's."""
    env = os.environ if environ is None else environ
    given = env.get(CONFIG_ENV)
    if given:
        return Path(given)
    return platformdirs.user_config_path(APP_NAME, appauthor=False) / "config.toml"


def log_dir() -> Path:
    """The user's log directory (``~/.local/state/postproject/log`` on Linux)."""
    return platformdirs.user_log_path(APP_NAME, appauthor=False)


@dataclass(frozen=True, slots=True)
class Config:
    """The effective settings (see the module docstring)."""

    path: Path
    file_exists: bool
    _settings: Mapping[str, Setting]
    _roots: Mapping[str, Setting]

    def __getitem__(self, key: str) -> Any:
        return self._settings[key].value

    def setting(self, key: str) -> Setting:
        return self._settings[key]

    def settings(self) -> list[Setting]:
        """Every setting, then every root map entry (``root_map.NAME``), in a stable order."""
        return [*self._settings.values(), *(self._roots[name] for name in sorted(self._roots))]

    @property
    def root_map(self) -> dict[str, str]:
        """Media root name -> this machine's directory, merged by name across the sources."""
        return {name: str(setting.value) for name, setting in self._roots.items()}


def load(
    *,
    flags: Mapping[str, tuple[str, object]] | None = None,
    root_map_flags: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Read the file and the environment and apply ``flags`` on top.

    Args:
        flags: key -> (option name, raw value) for settings given on the command line.
        root_map_flags: ``NAME=PATH`` items from ``--root-map`` options (later wins).
        environ: the environment (default ``os.environ``).

    Raises:
        InvalidArgumentError: the file is not valid TOML, has an unknown key or a bad value,
            or a variable or flag has a bad value.
    """
    env = os.environ if environ is None else environ
    path = config_path(env)
    document = _read(path)
    where = f"config file {path}"
    file_values = _flatten(document, where)
    settings: dict[str, Setting] = {}
    for key, (parse, default) in SCHEMA.items():
        setting = Setting(key, default, "default")
        if key in file_values:
            setting = Setting(key, parse(f"{where}: {key}", file_values[key]), "file", str(path))
        variable = env_name(key)
        if env.get(variable) not in (None, ""):
            setting = Setting(key, parse(variable, env[variable]), "env", variable)
        if flags and key in flags:
            option, raw = flags[key]
            if raw is not None:
                setting = Setting(key, parse(option, raw), "flag", option)
        settings[key] = setting
    roots: dict[str, Setting] = {}
    table = document.get("root_map", {})
    if not isinstance(table, dict):
        raise InvalidArgumentError(f"{where}: root_map must be a table of NAME = PATH")
    for name, value in table.items():
        _root(roots, f"{where}: root_map", name, value, "file", str(path))
    for item in _split_env_map(env.get(ROOT_MAP_ENV, "")):
        name, value = _pair(ROOT_MAP_ENV, item)
        _root(roots, ROOT_MAP_ENV, name, value, "env", ROOT_MAP_ENV)
    for item in root_map_flags or ():
        name, value = _pair("--root-map", item)
        _root(roots, "--root-map", name, value, "flag", "--root-map")
    return Config(path, path.is_file(), settings, roots)


def _read(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgumentError(f"config file {path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read config file {path}: {exc.strerror or exc}") from None


def _flatten(document: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``{"worker": {"lease": "2m"}}`` -> ``{"worker.lease": "2m"}`` (unknown keys refused)."""
    values: dict[str, Any] = {}
    sections = {key.partition(".")[0] for key in SCHEMA if "." in key}
    for key, value in document.items():
        if key == "root_map":
            continue
        if key in sections:
            if not isinstance(value, dict):
                raise InvalidArgumentError(f"{where}: [{key}] must be a table")
            for inner, item in value.items():
                full = f"{key}.{inner}"
                if full not in SCHEMA:
                    raise InvalidArgumentError(f"{where}: unknown setting {full!r} (known: {_known()})")
                values[full] = item
        elif key in SCHEMA:
            values[key] = value
        else:
            raise InvalidArgumentError(f"{where}: unknown setting {key!r} (known: {_known()})")
    return values


def _known() -> str:
    return ", ".join([*SCHEMA, "root_map.NAME"])


def _split_env_map(text: str) -> list[str]:
    """``POSTPROJECT_ROOT_MAP``: ``NAME=PATH`` items separated like ``PATH`` (``:`` or ``;``)."""
    return [item for item in text.split(os.pathsep) if item]


def _pair(what: str, item: str) -> tuple[str, str]:
    name, equals, path = item.partition("=")
    if not equals or not name or not path:
        raise InvalidArgumentError(f"{what} must look like NAME=PATH; got {item[:120]!r}")
    return name, path


def _root(roots: dict[str, Setting], what: str, name: str, value: object, source: str, origin: str) -> None:
    names.root_name(f"{what} name", name)
    path = _text(f"{what} {name}", value)
    roots[name] = Setting(f"root_map.{name}", path, source, origin)
