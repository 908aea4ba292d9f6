"""Typed metadata values: conversions, limits and exact round trips through storage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postproject import (
    AssetRef,
    BoolValue,
    BytesValue,
    DecimalValue,
    I64Value,
    InvalidArgumentError,
    LangStringValue,
    ListValue,
    Production,
    Property,
    RationalValue,
    ReferenceValue,
    StringValue,
    StructValue,
    TimestampValue,
    U64Value,
    UriValue,
)
from postproject.model import values

texts = st.text(max_size=40)
scalars = st.one_of(
    texts.map(StringValue),
    st.builds(LangStringValue, texts, st.sampled_from(["en", "fr-CA", "de"])),
    st.integers(-(2**63), 2**63 - 1).map(I64Value),
    st.integers(0, 2**64 - 1).map(U64Value),
    st.decimals(allow_nan=False, allow_infinity=False, places=None)
    .filter(lambda d: len(d.as_tuple().digits) <= 127 and abs(int(d.as_tuple().exponent)) <= 127)
    .map(DecimalValue),
    st.booleans().map(BoolValue),
    st.datetimes(timezones=st.just(UTC)).map(TimestampValue),
    st.from_regex(r"[a-z]{1,8}:[a-zA-Z0-9/._-]{0,30}", fullmatch=True).map(UriValue),
    st.binary(max_size=64).map(BytesValue),
    st.builds(RationalValue, st.integers(-(2**63), 2**63 - 1), st.integers(1, 2**64 - 1)),
)
metadata_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(lambda items: ListValue(tuple(items))),
        st.dictionaries(
            st.text(
                st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), min_size=1, max_size=8
            ),
            children,
            max_size=4,
        ).map(lambda d: StructValue(tuple(d.items()))),
    ),
    max_leaves=12,
)


@given(metadata_values)
def test_tagged_json_round_trip(value: values.MetadataValue) -> None:
    assert values.from_json(values.to_json(value)) == value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=metadata_values)
def test_storage_round_trip_keeps_kind_and_value(production: Production, value: values.MetadataValue) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        tx.add_metadata(AssetRef(asset), Property("urn:x-unknown:vocabulary", "p"), value)
        tx.commit()
    (assertion,) = production.metadata[AssetRef(asset)]
    assert type(assertion.value) is type(value)
    assert values.to_json(assertion.value) == values.to_json(value)


@pytest.mark.parametrize(
    ("plain", "expected"),
    [
        ("x", StringValue("x")),
        (True, BoolValue(True)),
        (5, I64Value(5)),
        (2**63, U64Value(2**63)),
        (Decimal("1.50"), DecimalValue(Decimal("1.50"))),
        (b"\x00", BytesValue(b"\x00")),
        (Fraction(24000, 1001), RationalValue(24000, 1001)),
        ([1, "a"], ListValue((I64Value(1), StringValue("a")))),
        ({"w": 1920}, StructValue((("w", I64Value(1920)),))),
    ],
)
def test_plain_values_convert_where_unambiguous(plain: object, expected: values.MetadataValue) -> None:
    assert values.to_value(plain) == expected


@pytest.mark.parametrize("bad", [1.5, float("nan"), None, object(), {1: "x"}, 2**64, -(2**63) - 1])
def test_floats_and_unrepresentable_values_are_invalid(bad: object) -> None:
    with pytest.raises(InvalidArgumentError):
        values.to_value(bad)


def test_timestamps_are_normalised_to_utc_and_naive_ones_refused() -> None:
    paris = datetime(2026, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert values.to_value(paris) == TimestampValue(datetime(2026, 5, 1, 10, 0, tzinfo=UTC))
    with pytest.raises(InvalidArgumentError):
        values.to_value(datetime(2026, 5, 1))  # noqa: DTZ001


def test_limits() -> None:
    with pytest.raises(InvalidArgumentError, match="at most 4096"):
        values.to_value(list(range(4097)))
    nested: object = 1
    for _ in range(40):
        nested = [nested]
    with pytest.raises(InvalidArgumentError, match="nest"):
        values.check_limits(values.to_value(nested))
    with pytest.raises(InvalidArgumentError):
        StringValue("x" * ((1 << 20) + 1))
    big = ListValue(tuple(BytesValue(b"\x00" * (1 << 20)) for _ in range(16)))
    with pytest.raises(InvalidArgumentError, match="payload"):
        values.check_limits(big)


@pytest.mark.parametrize(
    "document",
    [
        {"type": "float", "value": 1.5},
        {"type": "string"},
        {"type": "string", "value": "x", "extra": 1},
        {"type": "i64", "value": True},
        {"type": "i64", "value": "5"},
        {"type": "bytes", "hex": "ABC"},
        {"type": "decimal", "coefficient": "1.5", "scale": 0},
        {"type": "reference", "target": {"kind": "planet", "id": "x"}},
        [1, 2],
    ],
)
def test_malformed_tagged_json_is_invalid(document: object) -> None:
    with pytest.raises(InvalidArgumentError):
        values.from_json(document)


def test_assertions_keep_their_order_and_unknown_vocabularies(production: Production) -> None:
    prop = Property("https://example.org/never-seen#v2", "colour space")
    with production.edit() as tx:
        asset = tx.create_asset()
        for value in ("rec709", "p3", ReferenceValue(AssetRef(asset))):
            tx.add_metadata(AssetRef(asset), prop, value)
        tx.commit()
    assertions = production.metadata[AssetRef(asset)]
    assert [a.property for a in assertions] == [prop] * 3
    assert [a.value for a in assertions] == [
        StringValue("rec709"),
        StringValue("p3"),
        ReferenceValue(AssetRef(asset)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "i64", "value": ' + "1" * 5000 + "}",  # past Python's 4,300-digit int limit
        '{"type": "u64", "value": -' + "9" * 4301 + "}",
        '{"type": "rational", "numerator": 1, "denominator": ' + "7" * 9000 + "}",
        '{"type": "i64", "value": 99999999999999999999999}',  # parses, but is no i64
    ],
)
def test_huge_json_integers_are_invalid_argument(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match=r"integer|must be in"):
        values.parse_json(text)


@pytest.mark.parametrize("micros", [2**63 - 1, -(2**63), 253_402_300_800_000_000, -62_135_596_800_000_001])
def test_timestamps_outside_the_calendar_are_invalid_argument(micros: int) -> None:
    with pytest.raises(InvalidArgumentError, match="timestamp"):
        values.from_json({"type": "timestamp", "unix_micros": micros})


def test_timestamp_edges_round_trip_and_offsets_past_them_are_invalid() -> None:
    for when in (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)):
        value = values.TimestampValue(when)
        assert values.from_json(values.to_json(value)) == value
    for when in (
        datetime.max.replace(tzinfo=timezone(timedelta(hours=-1))),  # year 10000 in UTC
        datetime.min.replace(tzinfo=timezone(timedelta(hours=1))),  # year 0 in UTC
    ):
        with pytest.raises(InvalidArgumentError, match="timestamp"):
            values.TimestampValue(when)


def test_parse_json_refuses_floats_and_bad_text() -> None:
    with pytest.raises(InvalidArgumentError, match="float"):
        values.parse_json('{"type": "i64", "value": 1.5}')
    with pytest.raises(InvalidArgumentError, match="not valid JSON"):
        values.parse_json('{"type": ')
    with pytest.raises(InvalidArgumentError, match="nests too deeply"):
        values.parse_json("[" * 100_000 + "]" * 100_000)
    assert values.parse_json('{"type": "u64", "value": 18446744073709551615}') == values.U64Value(2**64 - 1)
