"""What an edit remembers it wrote (:class:`Created`), undone with the savepoint that undoes the rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# What an edit remembers it wrote, by table (PostgreSQL renumbers these rows at commit).
TABLES = ("assets", "media_roots", "representations", "fingerprints", "activities", "metadata", "jobs")


@dataclass(slots=True)
class Created:
    """What an edit wrote, by table, with what it knows of each row; undone with savepoints."""

    written: dict[str, dict[Any, Any]] = field(default_factory=lambda: {name: {} for name in TABLES})
    consumed: dict[bytes, None] = field(default_factory=dict)  # inputs of the edit's activities
    journal: list[tuple[dict[Any, Any], Any]] = field(default_factory=list)

    def add(self, table: str, key: Any, value: Any = None) -> None:
        target = self.consumed if table == "consumed" else self.written[table]
        if key not in target:
            target[key] = value
            self.journal.append((target, key))
        elif value is not None:
            target[key] = value

    def undo(self, length: int) -> None:
        """Forget what was added after the journal had ``length`` entries."""
        while len(self.journal) > length:
            target, key = self.journal.pop()
            target.pop(key, None)
