"""PostgreSQL URIs: libpq's syntax, the production= parameter, and passwords never shown."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from postproject.model.errors import ErrorCode, InvalidArgumentError, PostProjectError
from postproject.storage.postgresql.uri import (
    DEFAULT_PRODUCTION,
    check_production_name,
    is_postgres_uri,
    is_uri,
    parse,
    redact,
)

SECRET = "s3cr%3Ft-pw"  # percent-encoded "s3cr?t-pw"


@pytest.mark.parametrize(
    ("argument", "uri", "postgres"),
    [
        ("postgresql://h/db", True, True),
        ("postgres://u@h:5432/db?production=x", True, True),
        ("POSTGRESQL://h/db", True, True),
        ("postgresql:///db?host=/var/run/postgresql", True, True),
        ("mysql://h/db", True, False),
        ("file:///tmp/show.pproj", True, False),
        ("show.pproj", False, False),
        ("/srv/shows/a.pproj", False, False),
        ("postgresql:/h/db", False, False),  # not a URI libpq knows: a (strange) relative path
        ("C:\\shows\\a.pproj", False, False),
    ],
)
def test_is_uri_tells_uris_from_paths(argument: str, uri: bool, postgres: bool) -> None:
    assert is_uri(argument) is uri
    assert is_postgres_uri(argument) is postgres
    assert not is_uri(Path(argument))


def test_production_parameter_picks_the_schema_and_is_removed_before_libpq() -> None:
    parsed = parse(f"postgresql://render:{SECRET}@db.studio:6543/farm?sslmode=disable&production=show_a")
    assert parsed.production == "show_a"
    assert parsed.conninfo == f"postgresql://render:{SECRET}@db.studio:6543/farm?sslmode=disable"
    assert parsed.display == "postgresql://render@db.studio:6543/farm?sslmode=disable&production=show_a"


def test_default_production_and_libpq_forms() -> None:
    assert DEFAULT_PRODUCTION == "postproject"
    plain = parse("postgres://db.studio/farm")
    assert (plain.production, plain.conninfo) == ("postproject", "postgres://db.studio/farm")
    assert plain.display == "postgres://db.studio/farm?production=postproject"
    multi = parse("postgresql://h1:5432,h2:5433/farm?target_session_attrs=read-write&production=p2")
    assert multi.conninfo == "postgresql://h1:5432,h2:5433/farm?target_session_attrs=read-write"
    socket = parse("postgresql:///farm?host=%2Fvar%2Frun%2Fpostgresql&production=p3")
    assert socket.production == "p3"
    assert parse("POSTGRESQL://h/db").conninfo == "postgresql://h/db"  # libpq wants the scheme in lower case


@pytest.mark.parametrize(
    "uri",
    [
        f"postgresql://render:{SECRET}@db/farm",
        f"postgresql://render@db/farm?password={SECRET}",
        f"postgresql://render@db/farm?production=p&sslpassword={SECRET}&password={SECRET}",
        "postgresql://render:s3cr?t-pw@db/farm",  # libpq reads a raw '?' before the '@' as the password's
    ],
)
def test_display_and_repr_never_show_the_password(uri: str) -> None:
    parsed = parse(uri)
    for shown in (parsed.display, str(parsed), repr(parsed), redact(uri)):
        assert "s3cr" not in shown
        assert "render@db/farm" in shown


def test_pgpassword_is_scrubbed_from_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "env-secret-42")
    parsed = parse("postgresql://render@db/farm")
    assert parsed.scrub("FATAL: something about env-secret-42") == "FATAL: something about ***"


def test_a_parsed_uri_is_remembered_until_pgpassword_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A monitor opening a production parsed its URI six times; now once. The parse depends on
    PGPASSWORD (a secret to scrub), so a new PGPASSWORD parses it again."""
    monkeypatch.setenv("PGPASSWORD", "first-secret-1")
    uri = "postgresql://render@db/farm?production=show"
    first = parse(uri)
    assert parse(uri) is first
    monkeypatch.setenv("PGPASSWORD", "second-secret-2")
    second = parse(uri)
    assert second is not first
    assert second.scrub("second-secret-2 first-secret-1") == "*** first-secret-1"
    monkeypatch.delenv("PGPASSWORD")
    assert parse(uri).scrub("second-secret-2") == "second-secret-2"


@pytest.mark.parametrize(
    ("uri", "mentions"),
    [
        (f"postgresql://render:{SECRET}@[::1/farm", "IPv6"),
        (f"postgresql://render:{SECRET}@db/farm?nonsense=1", "nonsense"),
        (f"postgresql://render:{SECRET}@db/farm?novalue", "novalue"),
        (f"postgresql://render:{SECRET}@db:99999/farm", "99999"),
        (f"postgresql://render:{SECRET}@db:port/farm", "port"),
        (f"postgresql://render:{SECRET}@db/farm?production=a&production=b", "more than once"),
        (f"mysql://render:{SECRET}@db/farm", "mysql"),
        ("show.pproj", "not a PostgreSQL URI"),
    ],
)
def test_a_malformed_uri_is_invalid_argument_without_the_password(uri: str, mentions: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        parse(uri)
    error = raised.value
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert error.reason == "malformed_uri"
    assert mentions in error.message
    assert "s3cr" not in error.message
    assert error.__cause__ is None  # the driver's message (which quotes the URI) is not chained


@pytest.mark.parametrize(
    "name",
    [
        "x; drop table jobs",
        '"quoted"',
        "PUBLIC",
        "Show",
        "",
        "1st",
        "a-b",
        "a" * 64,
        "ünï",
        "public",
        "information_schema",
        "pg_catalog",
        "pg_anything",
    ],
)
def test_unsafe_production_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        check_production_name(name)
    assert raised.value.reason == "invalid_production_name"
    assert raised.value.code is ErrorCode.INVALID_ARGUMENT
    with pytest.raises(InvalidArgumentError) as from_uri:
        parse(f"postgresql://h/db?production={quote(name)}")
    assert from_uri.value.reason == "invalid_production_name"


@pytest.mark.parametrize("name", ["postproject", "show_a", "_private", "a" * 63, "select", "x9"])
def test_plain_lowercase_names_are_accepted(name: str) -> None:
    assert check_production_name(name) == name
    assert parse(f"postgresql://h/db?production={name}").production == name


def test_every_uri_error_is_a_postproject_error() -> None:
    for bad in ("postgresql://h/db?production=", "postgresql://[", "ftp://x"):
        with pytest.raises(PostProjectError):
            parse(bad)


@pytest.mark.parametrize(
    "uri",
    [
        "postgresql://render:s3cr/et@db:5432/farm?production=p",  # '/': libpq reads host 'render', port 's3cr'
        "postgresql://render:s3cr/et@Pw:x?y#z@db:5432/farm",
        "postgresql://render:s3cr@et@db/farm",  # '@': libpq reads host 'et@db'
        "postgresql://render:123/s3cr@db/farm",  # a numeric start passes for a port
        "postgresql://render:ab/s3cr?x@db/farm",  # '/' then '?' before the '@': a query without '='
    ],
)
def test_an_unencoded_slash_or_at_in_a_password_is_refused_without_showing_it(uri: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        parse(uri)
    assert raised.value.reason == "malformed_uri"
    assert "s3cr" not in raised.value.message
    assert "Percent-encode" in raised.value.message


@pytest.mark.parametrize(
    "uri",
    [
        "postgresql://render@db/farm?user=ana@studio",  # an '@' in a query value stays valid
        "postgresql://render:p%40ss%2Fw@db/farm",
        "postgresql://ana%40studio@db/farm",
    ],
)
def test_an_at_where_libpq_allows_it_is_accepted(uri: str) -> None:
    assert "p@ss" not in parse(uri).display


@pytest.mark.parametrize(
    "conninfo",
    [
        "host=db port=5432 user=render password=s3cr3t dbname=farm",
        "dbname=farm password='s3cr3t x'",
        "  user=render password=s3cr3t",
    ],
)
def test_a_libpq_key_value_string_is_refused_as_a_location(conninfo: str, tmp_path: Path) -> None:
    from postproject import Production, locations

    assert locations.is_conninfo(conninfo)
    assert "s3cr3t" not in locations.display_location(conninfo)
    for attempt in (Production.create, Production.open):
        with pytest.raises(InvalidArgumentError) as raised:
            attempt(conninfo)
        assert "key=value" in raised.value.message
        assert "s3cr3t" not in raised.value.message
    assert not any(Path.cwd().glob("*s3cr3t*"))
    assert not locations.is_conninfo("show.pproj")
    assert not locations.is_conninfo("postgresql://h/db?host=x")


def test_a_child_process_gets_the_password_in_its_environment_not_its_command_line() -> None:
    from postproject import locations

    shown, env = locations.for_child_process(f"postgresql://render:{SECRET}@db/farm?production=p")
    assert shown == "postgresql://render@db/farm?production=p"
    assert env == {"PGPASSWORD": "s3cr?t-pw"}
    assert locations.for_child_process("postgresql://render@db/farm") == (
        "postgresql://render@db/farm?production=postproject",
        {},
    )
    assert locations.for_child_process(Path("show.pproj")) == ("show.pproj", {})
