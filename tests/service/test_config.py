"""The service's settings: where it listens, and the statement timeout its connections carry."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from postproject import InvalidArgumentError
from postproject.service.config import parse_listen, with_statement_timeout


def test_listen_addresses() -> None:
    assert parse_listen("127.0.0.1:8470") == ("127.0.0.1", 8470)
    assert parse_listen("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_listen("[::1]:8470") == ("::1", 8470)
    assert parse_listen(":9000") == ("127.0.0.1", 9000)
    for bad in ("8470", "host:", "host:0", "host:70000", "a:b:c", "[::1]"):
        with pytest.raises(InvalidArgumentError, match="HOST:PORT"):
            parse_listen(bad)


def test_a_postgresql_location_gets_a_statement_timeout_and_keeps_its_options() -> None:
    plain = with_statement_timeout("postgresql://u@db/farm?production=show", 30)
    assert plain == "postgresql://u@db/farm?production=show&options=-c%20statement_timeout%3D30000"
    given = with_statement_timeout("postgresql://u@db/farm?options=-c%20search_path%3Dx&production=p", 2.5)
    options = unquote(given.partition("options=")[2].partition("&")[0])
    assert options == "-c search_path=x -c statement_timeout=2500"
    assert with_statement_timeout("show.pproj", 30) == "show.pproj"
