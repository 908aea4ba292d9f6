"""Metadata properties and assertions."""

from __future__ import annotations

from dataclasses import dataclass

from postproject.model import names
from postproject.model.values import MetadataValue

EXECUTOR_VOCABULARY = "https://postproject.org/ns/executor-parameters/1"


@dataclass(frozen=True, slots=True)
class Property:
    """A property: an exact vocabulary string (often a URI) and a name within it."""

    vocabulary: str
    name: str

    def __post_init__(self) -> None:
        names.bounded_text("metadata vocabulary", self.vocabulary, 2048)
        names.bounded_text("metadata property name", self.name, 256)

    def __str__(self) -> str:
        return f"{self.vocabulary}#{self.name}"


@dataclass(frozen=True, slots=True)
class Assertion:
    """One value of a property on one object."""

    property: Property
    value: MetadataValue
