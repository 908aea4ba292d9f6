"""What the monitor remembers between runs: recent productions, theme, window layout and
the job table's columns. Stored with QSettings (organisation "PostProject", application
"Monitor"); snapshot runs use :meth:`Settings.ephemeral` so they neither read nor write it.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from postproject_gui.look.theme import ThemeMode
from postproject_gui.text import location as production_location

ORGANISATION = "PostProject"
APPLICATION = "Monitor"
MAX_RECENT = 10


class Settings:
    """Typed access to the stored settings (or to an in-memory stand-in)."""

    def __init__(self, store: QSettings | None) -> None:
        self._store = store
        self._memory: dict[str, object] = {}

    @classmethod
    def user(cls) -> Settings:
        """The user's settings: an INI file in the user's configuration directory (the same
        format everywhere, and one that ``QSettings.setPath`` can redirect in tests)."""
        return cls(
            QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION, APPLICATION)
        )

    @classmethod
    def ephemeral(cls) -> Settings:
        return cls(None)

    def _get(self, key: str) -> object:
        return self._store.value(key) if self._store is not None else self._memory.get(key)

    def _set(self, key: str, value: object) -> None:
        if self._store is not None:
            self._store.setValue(key, value)
        else:
            self._memory[key] = value

    def sync(self) -> None:
        if self._store is not None:
            self._store.sync()

    # --- recent productions ------------------------------------------------------------

    def recent(self) -> list[str]:
        """Recent productions, newest first: paths, and URIs (kept without their passwords)."""
        value = self._get("recent")
        items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        return [p for p in items if isinstance(p, str) and p]

    def add_recent(self, location: str | Path) -> list[str]:
        kept = production_location.remembered(production_location.of(location))
        locations = [kept, *(p for p in self.recent() if p != kept)][:MAX_RECENT]
        self._set("recent", locations)
        return locations

    def clear_recent(self) -> None:
        self._set("recent", [])

    # --- look and layout ---------------------------------------------------------------

    def theme(self) -> ThemeMode:
        value = self._get("theme")
        try:
            return ThemeMode(value) if isinstance(value, str) else ThemeMode.SYSTEM
        except ValueError:
            return ThemeMode.SYSTEM

    def set_theme(self, mode: ThemeMode) -> None:
        self._set("theme", mode.value)

    def strings(self, key: str) -> list[str] | None:
        """A saved list of strings (None when never saved)."""
        value = self._get(f"layout/{key}")
        if value is None:
            return None
        items = value if isinstance(value, list) else [value]
        return [str(v) for v in items if v != ""]

    def set_strings(self, key: str, values: list[str]) -> None:
        self._set(f"layout/{key}", values or "")

    def blob(self, key: str) -> QByteArray | None:
        """A saved Qt state (header, window, splitter)."""
        value = self._get(f"layout/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_blob(self, key: str, value: QByteArray) -> None:
        self._set(f"layout/{key}", value)

    # --- plain values (workspaces) -------------------------------------------------------

    def text(self, key: str) -> str | None:
        value = self._get(key)
        return value if isinstance(value, str) else None

    def set_text(self, key: str, value: str) -> None:
        self._set(key, value)

    # --- saved job filters -------------------------------------------------------------

    def saved_filters(self) -> dict[str, str]:
        """Named job filters the user saved (name -> the filter as JSON text)."""
        text = self._get("jobs/saved_filters")
        try:
            data = json.loads(text) if isinstance(text, str) and text else {}
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def set_saved_filters(self, filters: dict[str, str]) -> None:
        self._set("jobs/saved_filters", json.dumps(filters, sort_keys=True))
