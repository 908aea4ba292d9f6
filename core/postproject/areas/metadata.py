"""The metadata area: typed property values asserted on assets, representations, activities and jobs.

``Transaction`` builds one :class:`MetadataOperations` per edit, given the edit's state, and
delegates ``add_metadata`` to it (its public docstring is on
:class:`postproject.transaction.Transaction`); the regeneration area asserts each plan's
parameters through the same object. ``Production`` builds one :class:`MetadataView`, given
its handle, and offers it as ``production.metadata``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from postproject.base.edit import EditState
from postproject.base.handle import ProductionHandle
from postproject.model import values as metadata_values
from postproject.model.errors import InvalidArgumentError, NotFoundError
from postproject.model.metadata import Assertion, Property
from postproject.model.refs import ObjectRef, check_ref

_TABLES = {"asset": "assets", "representation": "representations", "activity": "activities", "job": "jobs"}


class MetadataOperations:
    """Appending typed values to the object a reference names."""

    def __init__(self, edit: EditState) -> None:
        self._edit = edit

    def add_metadata(self, ref: ObjectRef, property: Property, value: object) -> None:
        """Append a typed value of ``property`` to the object ``ref`` names."""
        check_ref(ref)
        if not isinstance(property, Property):
            raise InvalidArgumentError(f"property must be a Property; got {type(property).__name__}")
        typed = metadata_values.to_value(value)
        metadata_values.check_limits(typed)
        encoded = json.dumps(metadata_values.to_json(typed), separators=(",", ":"), ensure_ascii=False)
        with self._edit.operation(savepoint=False) as s:
            if s.missing(_TABLES[ref.kind], [ref.id.bytes]):
                raise NotFoundError(f"{ref.kind} {ref.id} does not exist")
            s.insert_metadata(ref.code, ref.id.bytes, property.vocabulary, property.name, encoded)
            s.event(
                "metadata_added_or_replaced",
                ref.id.bytes,
                {
                    "target": {"kind": ref.kind, "id": str(ref.id)},
                    "vocabulary": property.vocabulary,
                    "property": property.name,
                },
            )


class MetadataView:
    """``production.metadata[ref]`` -> the assertions on that object, in order."""

    def __init__(self, handle: ProductionHandle) -> None:
        self._handle = handle

    def __getitem__(self, ref: ObjectRef) -> tuple[Assertion, ...]:
        self._handle.check_open()
        check_ref(ref)
        return assertions(self._handle.reads.metadata(ref.code, ref.id.bytes))


def assertions(rows: Iterable[tuple[str, str, str]]) -> tuple[Assertion, ...]:
    """Assertions from stored metadata rows (vocabulary, property, value as JSON text)."""
    return tuple(
        Assertion(Property(vocabulary, name), metadata_values.from_json(json.loads(value)))
        for vocabulary, name, value in rows
    )
