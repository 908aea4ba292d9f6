"""Typed metadata values (notes §1.6): no floats, no free JSON.

Each value is a frozen dataclass whose ``kind`` names its type. Plain Python values are
converted by :func:`to_value` where that is unambiguous; values read back keep their kind.
The tagged-JSON form (``{"type": "string", "value": "x"}``) is what storage and the CLI use.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, ClassVar

from postproject.model import names
from postproject.model.clock import from_micros, to_micros
from postproject.model.errors import InvalidArgumentError
from postproject.model.refs import ObjectRef, check_ref, make_ref

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U64_MAX = 2**64 - 1
MAX_NESTING = 32
MAX_ITEMS = 4096
MAX_TEXT_BYTES = 1 << 20
MAX_PAYLOAD_BYTES = 15 << 20
MAX_DECIMAL_DIGITS = 127
MAX_DECIMAL_SCALE = 127
# The instants a datetime can hold (years 1-9999, UTC), in Unix microseconds.
MIN_TIMESTAMP_MICROS = to_micros(datetime.min.replace(tzinfo=UTC))
MAX_TIMESTAMP_MICROS = to_micros(datetime.max.replace(tzinfo=UTC))
# More digits than any i64/u64 has: a longer integer is refused before Python converts it
# (which it refuses past 4,300 digits with a ValueError of its own).
MAX_JSON_INTEGER_DIGITS = 20
_LANGUAGE = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")


def _int(field: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{field} must be an integer; got {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidArgumentError(f"{field} must be in {low}..{high}; got {value}")
    return value


def _str(field: str, value: object) -> str:
    """Text of at most 1 MiB UTF-8 (any character, NUL included, but no lone surrogates)."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{field} must be text; got {type(value).__name__}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(f"{field} must be valid Unicode text (no lone surrogates)") from exc
    if size > MAX_TEXT_BYTES:
        raise InvalidArgumentError(f"{field} must be at most {MAX_TEXT_BYTES} UTF-8 bytes; got {size}")
    return value


@dataclass(frozen=True, slots=True)
class StringValue:
    """Plain text."""

    value: str
    kind: ClassVar[str] = "string"

    def __post_init__(self) -> None:
        _str("string value", self.value)


@dataclass(frozen=True, slots=True)
class LangStringValue:
    """Text in a language (BCP 47 tag such as ``en`` or ``fr-CA``)."""

    value: str
    language: str
    kind: ClassVar[str] = "lang_string"

    def __post_init__(self) -> None:
        _str("lang_string value", self.value)
        if not isinstance(self.language, str) or not _LANGUAGE.fullmatch(self.language):
            raise InvalidArgumentError(f"language must be a BCP 47 tag; got {self.language!r}")


@dataclass(frozen=True, slots=True)
class I64Value:
    """A signed 64-bit integer."""

    value: int
    kind: ClassVar[str] = "i64"

    def __post_init__(self) -> None:
        _int("i64 value", self.value, I64_MIN, I64_MAX)


@dataclass(frozen=True, slots=True)
class U64Value:
    """An unsigned 64-bit integer."""

    value: int
    kind: ClassVar[str] = "u64"

    def __post_init__(self) -> None:
        _int("u64 value", self.value, 0, U64_MAX)


@dataclass(frozen=True, slots=True)
class DecimalValue:
    """An exact decimal number (coefficient × 10^-scale)."""

    value: Decimal
    kind: ClassVar[str] = "decimal"

    def __post_init__(self) -> None:
        if not isinstance(self.value, Decimal) or not self.value.is_finite():
            raise InvalidArgumentError(f"decimal value must be a finite Decimal; got {self.value!r}")
        _, digits, exponent = self.value.as_tuple()
        if len(digits) > MAX_DECIMAL_DIGITS or abs(int(exponent)) > MAX_DECIMAL_SCALE:
            raise InvalidArgumentError(
                f"decimal value must have at most {MAX_DECIMAL_DIGITS} digits and a scale within "
                f"±{MAX_DECIMAL_SCALE}; got {str(self.value)[:60]}"
            )

    @property
    def coefficient(self) -> str:
        """The signed digits as text (keeps the sign of negative zero)."""
        sign, digits, _ = self.value.as_tuple()
        return ("-" if sign else "") + ("".join(map(str, digits)) or "0")

    @property
    def scale(self) -> int:
        return -int(self.value.as_tuple().exponent)


@dataclass(frozen=True, slots=True)
class BoolValue:
    """True or false."""

    value: bool
    kind: ClassVar[str] = "bool"

    def __post_init__(self) -> None:
        if not isinstance(self.value, bool):
            raise InvalidArgumentError(f"bool value must be True or False; got {self.value!r}")


@dataclass(frozen=True, slots=True)
class TimestampValue:
    """An instant, stored as Unix microseconds; read back as an aware UTC datetime."""

    value: datetime
    kind: ClassVar[str] = "timestamp"

    def __post_init__(self) -> None:
        if not isinstance(self.value, datetime) or self.value.tzinfo is None:
            raise InvalidArgumentError(
                f"timestamp value must be a timezone-aware datetime; got {self.value!r}"
            )
        if self.value.utcoffset():
            try:
                object.__setattr__(self, "value", from_micros(to_micros(self.value)))
            except OverflowError:
                raise InvalidArgumentError(
                    f"timestamp value must lie within years 1-9999 in UTC; got {self.value.isoformat()}"
                ) from None


@dataclass(frozen=True, slots=True)
class UriValue:
    """An absolute URI."""

    value: str
    kind: ClassVar[str] = "uri"

    def __post_init__(self) -> None:
        text = _str("uri value", self.value)
        if ":" not in text or not text.split(":", 1)[0] or any(ch.isspace() for ch in text):
            raise InvalidArgumentError(
                f"uri value must be an absolute URI without spaces; got {text[:120]!r}"
            )


@dataclass(frozen=True, slots=True)
class BytesValue:
    """Binary data."""

    value: bytes
    kind: ClassVar[str] = "bytes"

    def __post_init__(self) -> None:
        if not isinstance(self.value, bytes):
            raise InvalidArgumentError(f"bytes value must be bytes; got {type(self.value).__name__}")


@dataclass(frozen=True, slots=True)
class RationalValue:
    """An exact ratio such as a frame rate 24000/1001 (i64 numerator, u64 denominator > 0)."""

    numerator: int
    denominator: int
    kind: ClassVar[str] = "rational"

    def __post_init__(self) -> None:
        _int("rational numerator", self.numerator, I64_MIN, I64_MAX)
        _int("rational denominator", self.denominator, 1, U64_MAX)


@dataclass(frozen=True, slots=True)
class ListValue:
    """An ordered list of values (one value, not several assertions)."""

    values: tuple[MetadataValue, ...]
    kind: ClassVar[str] = "list"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(to_value(v) for v in _items("list", self.values)))


@dataclass(frozen=True, slots=True)
class StructValue:
    """Named fields in order; names are distinct."""

    fields: tuple[tuple[str, MetadataValue], ...]
    kind: ClassVar[str] = "struct"

    def __post_init__(self) -> None:
        fields = []
        seen: set[str] = set()
        for item in _items("struct", self.fields):
            if not (isinstance(item, tuple) and len(item) == 2):
                raise InvalidArgumentError("struct fields must be (name, value) pairs")
            name = names.bounded_text("struct field name", item[0], 256)
            if name in seen:
                raise InvalidArgumentError(f"struct field names must be distinct; {name!r} repeats")
            seen.add(name)
            fields.append((name, to_value(item[1])))
        object.__setattr__(self, "fields", tuple(fields))


@dataclass(frozen=True, slots=True)
class ReferenceValue:
    """A reference to another object of the production."""

    target: ObjectRef
    kind: ClassVar[str] = "reference"

    def __post_init__(self) -> None:
        check_ref(self.target)


MetadataValue = (
    StringValue
    | LangStringValue
    | I64Value
    | U64Value
    | DecimalValue
    | BoolValue
    | TimestampValue
    | UriValue
    | BytesValue
    | RationalValue
    | ListValue
    | StructValue
    | ReferenceValue
)
VALUE_TYPES: tuple[type[MetadataValue], ...] = (
    StringValue,
    LangStringValue,
    I64Value,
    U64Value,
    DecimalValue,
    BoolValue,
    TimestampValue,
    UriValue,
    BytesValue,
    RationalValue,
    ListValue,
    StructValue,
    ReferenceValue,
)
VALUE_KINDS: tuple[str, ...] = tuple(t.kind for t in VALUE_TYPES)


def _items(kind: str, items: object) -> tuple[Any, ...]:
    if not isinstance(items, (list, tuple)):
        raise InvalidArgumentError(f"{kind} items must be a list or tuple; got {type(items).__name__}")
    if len(items) > MAX_ITEMS:
        raise InvalidArgumentError(f"a {kind} holds at most {MAX_ITEMS} items; got {len(items)}")
    return tuple(items)


def to_value(value: object) -> MetadataValue:
    """Convert a plain Python value (or pass a typed value through).

    str → string, bool → bool, int → i64 (u64 when above the i64 range), Decimal → decimal,
    aware datetime → timestamp, bytes → bytes, Fraction → rational, list/tuple → list,
    dict → struct, AssetRef/… → reference. Floats and anything else are invalid_argument.
    """
    if isinstance(value, VALUE_TYPES):
        return value
    if isinstance(value, bool):
        return BoolValue(value)
    if isinstance(value, int):
        return I64Value(value) if value <= I64_MAX else U64Value(value)
    if isinstance(value, float):
        raise InvalidArgumentError(
            f"metadata values cannot be floats (got {value!r}); use Decimal, a rational or an integer"
        )
    if isinstance(value, str):
        return StringValue(value)
    if isinstance(value, Decimal):
        return DecimalValue(value)
    if isinstance(value, datetime):
        return TimestampValue(value)
    if isinstance(value, (bytes, bytearray)):
        return BytesValue(bytes(value))
    if isinstance(value, Fraction):
        return RationalValue(value.numerator, value.denominator)
    if isinstance(value, (list, tuple)):
        return ListValue(tuple(value))
    if isinstance(value, dict):
        return StructValue(tuple(value.items()))
    try:
        return ReferenceValue(check_ref(value))
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"cannot store a {type(value).__name__} as metadata; use str, bool, int, Decimal, "
            "datetime, bytes, Fraction, a list/dict of those, or a typed value"
        ) from None


def to_python(value: MetadataValue) -> object:
    """The plain Python form of a typed value (lists become lists, structs dicts)."""
    if isinstance(value, ListValue):
        return [to_python(v) for v in value.values]
    if isinstance(value, StructValue):
        return {name: to_python(v) for name, v in value.fields}
    if isinstance(value, RationalValue):
        return Fraction(value.numerator, value.denominator)
    if isinstance(value, ReferenceValue):
        return value.target
    if isinstance(value, LangStringValue):
        return value.value
    return value.value


def check_limits(value: MetadataValue) -> None:
    """Enforce nesting (≤32) and total payload (≤15 MiB) limits."""
    if _payload(value, 1) > MAX_PAYLOAD_BYTES:
        raise InvalidArgumentError(f"metadata value payload exceeds {MAX_PAYLOAD_BYTES} bytes")


def _payload(value: MetadataValue, depth: int) -> int:
    if depth > MAX_NESTING:
        raise InvalidArgumentError(f"metadata values nest at most {MAX_NESTING} levels deep")
    if isinstance(value, ListValue):
        return sum(_payload(v, depth + 1) for v in value.values)
    if isinstance(value, StructValue):
        return sum(len(n.encode()) + _payload(v, depth + 1) for n, v in value.fields)
    if isinstance(value, (StringValue, UriValue)):
        return len(value.value.encode())
    if isinstance(value, LangStringValue):
        return len(value.value.encode()) + len(value.language)
    if isinstance(value, BytesValue):
        return len(value.value)
    return 16


def to_json(value: MetadataValue) -> dict[str, Any]:
    """The tagged-JSON form."""
    kind = value.kind
    if isinstance(value, (StringValue, UriValue, BoolValue)):
        return {"type": kind, "value": value.value}
    if isinstance(value, (I64Value, U64Value)):
        return {"type": kind, "value": value.value}
    if isinstance(value, LangStringValue):
        return {"type": kind, "value": value.value, "language": value.language}
    if isinstance(value, DecimalValue):
        return {"type": kind, "coefficient": value.coefficient, "scale": value.scale}
    if isinstance(value, TimestampValue):
        return {"type": kind, "unix_micros": to_micros(value.value)}
    if isinstance(value, BytesValue):
        return {"type": kind, "hex": value.value.hex()}
    if isinstance(value, RationalValue):
        return {
            "type": kind,
            "numerator": value.numerator,
            "denominator": value.denominator,
        }
    if isinstance(value, ListValue):
        return {"type": kind, "values": [to_json(v) for v in value.values]}
    if isinstance(value, StructValue):
        return {
            "type": kind,
            "fields": [{"name": n, "value": to_json(v)} for n, v in value.fields],
        }
    return {
        "type": kind,
        "target": {"kind": value.target.kind, "id": str(value.target.id)},
    }


def parse_json(text: str) -> MetadataValue:
    """A typed value from its tagged-JSON text, strictly: no floats, NaN or Infinity, no
    integer longer than any 64-bit one, bounded nesting. Everything wrong is
    invalid_argument (never a ValueError or RecursionError of the JSON parser)."""
    try:
        data = json.loads(text, parse_float=_no_float, parse_constant=_no_float, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError(
            f"VALUE_JSON is not valid JSON: {exc.msg} at character {exc.pos}"
        ) from None
    except RecursionError:
        raise InvalidArgumentError("VALUE_JSON nests too deeply") from None
    return from_json(data)


def _no_float(text: str) -> object:
    raise InvalidArgumentError(f"metadata values have no floats (got {text[:40]}); use a decimal or rational")


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INTEGER_DIGITS:
        raise InvalidArgumentError(
            f"an integer in VALUE_JSON has {digits} digits; 64-bit values have at most {MAX_JSON_INTEGER_DIGITS}"
        )
    return int(text)


def from_json(data: object, _depth: int = 1) -> MetadataValue:
    """Parse the tagged-JSON form strictly (unknown keys or types are invalid_argument)."""
    if _depth > MAX_NESTING:
        raise InvalidArgumentError(f"metadata values nest at most {MAX_NESTING} levels deep")
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise InvalidArgumentError('a typed value must be a JSON object with a "type" field')
    kind = data["type"]
    try:
        spec = _JSON_FIELDS[kind]
    except KeyError:
        raise InvalidArgumentError(
            f"value type must be one of {', '.join(VALUE_KINDS)}; got {kind[:40]!r}"
        ) from None
    if set(data) != {"type", *spec}:
        raise InvalidArgumentError(f"a {kind} value has exactly the fields {', '.join(spec)}")
    return _build(kind, data, _depth)


_JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "string": ("value",),
    "lang_string": ("value", "language"),
    "i64": ("value",),
    "u64": ("value",),
    "decimal": ("coefficient", "scale"),
    "bool": ("value",),
    "timestamp": ("unix_micros",),
    "uri": ("value",),
    "bytes": ("hex",),
    "rational": ("numerator", "denominator"),
    "list": ("values",),
    "struct": ("fields",),
    "reference": ("target",),
}


def _build(kind: str, data: dict[str, Any], depth: int) -> MetadataValue:
    if kind == "string":
        return StringValue(data["value"])
    if kind == "lang_string":
        return LangStringValue(data["value"], data["language"])
    if kind == "i64":
        return I64Value(data["value"])
    if kind == "u64":
        return U64Value(data["value"])
    if kind == "bool":
        return BoolValue(data["value"])
    if kind == "uri":
        return UriValue(data["value"])
    if kind == "decimal":
        return DecimalValue(_decimal(data["coefficient"], data["scale"]))
    if kind == "timestamp":
        micros = _int(
            "timestamp unix_micros", data["unix_micros"], MIN_TIMESTAMP_MICROS, MAX_TIMESTAMP_MICROS
        )
        return TimestampValue(from_micros(micros))
    if kind == "bytes":
        return BytesValue(_hex(data["hex"]))
    if kind == "rational":
        return RationalValue(data["numerator"], data["denominator"])
    if kind == "list":
        return ListValue(tuple(from_json(v, depth + 1) for v in _items("list", data["values"])))
    if kind == "struct":
        return StructValue(tuple(_field(f, depth) for f in _items("struct", data["fields"])))
    target = data["target"]
    if not isinstance(target, dict) or set(target) != {"kind", "id"}:
        raise InvalidArgumentError('a reference target is {"kind": ..., "id": ...}')
    return ReferenceValue(make_ref(str(target["kind"]), target["id"]))


def _field(item: object, depth: int) -> tuple[str, MetadataValue]:
    if not isinstance(item, dict) or set(item) != {"name", "value"}:
        raise InvalidArgumentError('a struct field is {"name": ..., "value": ...}')
    return item["name"], from_json(item["value"], depth + 1)


def _decimal(coefficient: object, scale: object) -> Decimal:
    if not isinstance(coefficient, str) or not re.fullmatch(r"-?[0-9]{1,127}", coefficient):
        raise InvalidArgumentError(f"decimal coefficient must be a string of digits; got {coefficient!r}")
    exponent = -_int("decimal scale", scale, -MAX_DECIMAL_SCALE, MAX_DECIMAL_SCALE)
    try:
        return Decimal(f"{coefficient}E{exponent}") if exponent else Decimal(coefficient)
    except InvalidOperation as exc:  # pragma: no cover - bounded above
        raise InvalidArgumentError("decimal out of range") from exc


def _hex(text: object) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"(?:[0-9a-f]{2})*", text):
        raise InvalidArgumentError("bytes hex must be lowercase hexadecimal with an even length")
    return bytes.fromhex(text)
