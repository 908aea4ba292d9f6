"""Who did the work: tool and agent identities (notes §1.5)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from postproject.model import names
from postproject.model.errors import InvalidArgumentError


@dataclass(frozen=True, slots=True)
class ToolIdentity:
    """A tool: name (1-256 bytes), optional version (1-128 bytes), optional absolute URI."""

    name: str
    version: str | None = None
    uri: str | None = None

    def __post_init__(self) -> None:
        names.bounded_text("tool name", self.name, 256)
        if self.version is not None:
            names.bounded_text("tool version", self.version, 128)
        if self.uri is not None:
            _absolute_uri("tool uri", self.uri)

    def __str__(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


@dataclass(frozen=True, slots=True)
class AgentIdentity:
    """Who ran the tool (a person, host or service): name of 1-256 bytes."""

    name: str

    def __post_init__(self) -> None:
        names.bounded_text("agent name", self.name, 256)

    def __str__(self) -> str:
        return self.name


def _absolute_uri(field: str, value: object) -> str:
    text = names.bounded_text(field, value, 4096)
    parts = urlsplit(text)
    if not parts.scheme or any(ch.isspace() for ch in text) or names.has_control(text):
        raise InvalidArgumentError(f"{field} must be an absolute URI without spaces; got {text[:140]!r}")
    return text
