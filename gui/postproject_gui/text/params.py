"""Typed job parameters as the request dialog edits them: a type name and a text (no Qt).

Values are never floats or free JSON: each text parses into one of the core's typed values,
with the core's own validation. ``json`` accepts the tagged form the CLI prints
(``{"type": "list", "values": [...]}``) for lists, structs and references.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation

from postproject import (
    BoolValue,
    BytesValue,
    DecimalValue,
    I64Value,
    LangStringValue,
    MetadataValue,
    RationalValue,
    StringValue,
    TimestampValue,
    U64Value,
    UriValue,
)
from postproject.model import values as core_values

TYPES: tuple[str, ...] = (
    "string",
    "i64",
    "u64",
    "decimal",
    "bool",
    "timestamp",
    "uri",
    "rational",
    "bytes",
    "json",
)
HINTS: dict[str, str] = {
    "string": "any text",
    "i64": "whole number, e.g. 1080",
    "u64": "non-negative whole number",
    "decimal": "exact decimal, e.g. 23.976",
    "bool": "true or false",
    "timestamp": "ISO 8601 with offset, e.g. 2026-01-01T12:00:00+00:00",
    "uri": "absolute URI, e.g. https://example.org/lut",
    "rational": "ratio, e.g. 24000/1001",
    "bytes": "hexadecimal, e.g. 00ff",
    "json": 'tagged JSON, e.g. {"type": "list", "values": []}',
}
_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


def parse(type_name: str, text: str) -> MetadataValue:
    """Parse ``text`` as a ``type_name`` value (ValueError, with a readable message, if not)."""
    try:
        return _parse(type_name, text)
    except (ValueError, InvalidOperation, json.JSONDecodeError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise ValueError(f"{type_name}: {message}") from None


def _parse(type_name: str, text: str) -> MetadataValue:
    raw = text.strip()
    if type_name == "string":
        return StringValue(text)
    if type_name in ("i64", "u64"):
        number = int(raw.replace("_", ""))
        return I64Value(number) if type_name == "i64" else U64Value(number)
    if type_name == "decimal":
        return DecimalValue(Decimal(raw))
    if type_name == "bool":
        if raw.lower() not in _TRUE | _FALSE:
            raise ValueError("write true or false")
        return BoolValue(raw.lower() in _TRUE)
    if type_name == "timestamp":
        return TimestampValue(datetime.fromisoformat(raw))
    if type_name == "uri":
        return UriValue(raw)
    if type_name == "rational":
        top, _, bottom = raw.partition("/")
        return RationalValue(int(top), int(bottom or "1"))
    if type_name == "bytes":
        return BytesValue(bytes.fromhex(raw))
    if type_name == "json":
        return core_values.from_json(json.loads(raw))
    raise ValueError(f"unknown type {type_name!r}")


def display(value: MetadataValue) -> tuple[str, str]:
    """(type name, text) of a typed value, as the detail panel lists parameters."""
    if isinstance(value, (StringValue, UriValue)):
        return value.kind, value.value
    if isinstance(value, LangStringValue):
        return value.kind, f"{value.value} @{value.language}"
    if isinstance(value, (I64Value, U64Value, DecimalValue)):
        return value.kind, str(value.value)
    if isinstance(value, BoolValue):
        return value.kind, "true" if value.value else "false"
    if isinstance(value, TimestampValue):
        return value.kind, value.value.isoformat()
    if isinstance(value, RationalValue):
        return value.kind, f"{value.numerator}/{value.denominator}"
    if isinstance(value, BytesValue):
        return value.kind, value.value.hex()
    return value.kind, json.dumps(core_values.to_json(value), separators=(",", ":"))


def tagged_json(value: MetadataValue) -> str:
    """The CLI's tagged-JSON text of a value."""
    return json.dumps(core_values.to_json(value), separators=(",", ":"))
