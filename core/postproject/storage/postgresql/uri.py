"""PostgreSQL production URIs: ``postgresql://`` or ``postgres://`` in libpq's syntax.

::

    postgresql://render@db.studio:5432/farm?production=show_a&sslmode=require

The query parameter ``production=NAME`` picks the schema that holds the production (default
:data:`DEFAULT_PRODUCTION`) and is removed before libpq sees the URI; everything else is
libpq's (hosts, ports, ``sslmode``, ``passfile``, ...). Passwords come from the URI,
``PGPASSWORD`` or a passfile, as libpq finds them; :attr:`PostgresUri.display` and every
error message here show the URI without its password.

A production name is a plain lowercase identifier (:data:`PRODUCTION_NAME`); reserved schema
names (``public``, ``information_schema``, ``pg_*``) are refused too. The name is only ever
used in SQL through ``psycopg.sql.Identifier``.

Errors: ``invalid_argument`` with reason ``malformed_uri`` (not a URI libpq accepts, an
unsupported scheme, a bad port) or ``invalid_production_name``; ``unsupported`` with reason
``driver_missing`` when psycopg is not installed.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from postproject.model.errors import InvalidArgumentError, Reason, UnsupportedError

SCHEMES = ("postgresql", "postgres")
DEFAULT_PRODUCTION = "postproject"
PRODUCTION_PARAMETER = "production"
PRODUCTION_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
RESERVED_NAMES = frozenset({"public", "information_schema"})
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
_ANY_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# libpq's key=value connection strings ("host=db user=render password=..."): refused as a
# location (a URI is the one syntax), never taken for a file name.
_CONNINFO = re.compile(
    r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|connect_timeout|options"
    r"|application_name|target_session_attrs)\s*=",
    re.IGNORECASE,
)
_CONNINFO_SECRET = re.compile(r"(\b(?:password|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)", re.IGNORECASE)


def is_uri(production: object) -> bool:
    """Whether a production argument is a URI (``scheme://...``) rather than a file path.

    True for every scheme, so that :func:`parse` can refuse an unsupported one clearly
    instead of the caller looking for a file named ``mysql:/...``.
    """
    return isinstance(production, str) and _ANY_SCHEME.match(production) is not None


def is_conninfo(production: object) -> bool:
    """Whether a production argument is a libpq ``key=value`` connection string (refused: a
    PostgreSQL production is named by a ``postgresql://`` URI)."""
    return isinstance(production, str) and not is_uri(production) and _CONNINFO.match(production) is not None


def refuse_conninfo(production: str) -> InvalidArgumentError:
    """The error for a libpq ``key=value`` string given as a production (it shows no value)."""
    del production  # shown nowhere: it may hold a password
    return InvalidArgumentError(
        "a libpq key=value connection string is not a production location: name a "
        "PostgreSQL production by a URI, postgresql://USER@HOST:PORT/DATABASE?production=NAME, "
        "with its password in PGPASSWORD or a passfile",
        reason=Reason.MALFORMED_URI,
    )


def redact_conninfo(text: str) -> str:
    """A libpq ``key=value`` string without its ``password=`` and ``sslpassword=`` values."""
    return _CONNINFO_SECRET.sub(lambda m: m.group(1) + "***", text)


def is_postgres_uri(production: object) -> bool:
    """Whether a production argument is a ``postgresql://`` or ``postgres://`` URI."""
    match = _ANY_SCHEME.match(production) if isinstance(production, str) else None
    return match is not None and match.group(1).lower() in SCHEMES


@dataclass(frozen=True)
class PostgresUri:
    """A parsed production URI. ``str()`` and ``repr()`` never show the password."""

    #: libpq's connection string: the URI without ``production=`` (may hold a password).
    conninfo: str = field(repr=False)
    #: The schema holding the production.
    production: str
    #: The URI without any password, for errors, logs, titles and snapshot JSON.
    display: str
    #: Texts never to show: the URI's passwords (raw and decoded) and ``PGPASSWORD``.
    secrets: tuple[str, ...] = field(repr=False, default=())

    def __str__(self) -> str:
        return self.display

    def scrub(self, text: str) -> str:
        """``text`` with every secret of this URI replaced by ``***``."""
        return scrub(text, self.secrets)


def parse(uri: str) -> PostgresUri:
    """Parse a production URI; ``invalid_argument`` when it is malformed or names a bad production.

    Remembered per URI and ``PGPASSWORD`` (its secrets): a monitor opening a production parsed
    its URI six times (title, status bar, workspace, connection), 0.3 ms each."""
    if not isinstance(uri, str):  # (refused below; maybe not hashable)
        return _read(uri)
    return _remembered(uri, os.environ.get("PGPASSWORD"))


@functools.lru_cache(maxsize=64)
def _remembered(uri: str, _pgpassword: str | None) -> PostgresUri:
    return _read(uri)


def _read(uri: str) -> PostgresUri:
    match = _ANY_SCHEME.match(uri) if isinstance(uri, str) else None
    if match is None:
        raise InvalidArgumentError(
            f"not a PostgreSQL URI: {redact(str(uri))!r} (expected postgresql://...)",
            reason=Reason.MALFORMED_URI,
        )
    scheme = match.group(1).lower()
    if scheme not in SCHEMES:
        raise InvalidArgumentError(
            f"unsupported URI scheme {match.group(1)!r} in {redact(uri)!r}: a production is a .pproj "
            "path or a postgresql:// URI",
            reason=Reason.MALFORMED_URI,
        )
    if _ambiguous_userinfo(uri[match.end() :]):
        raise InvalidArgumentError(
            f"malformed PostgreSQL URI {scheme}://...: its user information is ambiguous (an '@' after "
            "the host, or in a password). Percent-encode a password's '@', '/', '?', '#' and ':' "
            "(%40, %2F, %3F, %23, %3A), or give it with PGPASSWORD or a passfile",
            reason=Reason.MALFORMED_URI,
        )
    base, query = _split_query(f"{scheme}://{uri[match.end() :]}")
    production = DEFAULT_PRODUCTION
    kept: list[str] = []
    named = 0
    for pair in query.split("&") if query else []:
        key, sep, value = pair.partition("=")
        if unquote(key) == PRODUCTION_PARAMETER and sep:
            production = unquote(value)
            named += 1
        else:
            kept.append(pair)
    if named > 1:
        raise InvalidArgumentError(
            f"the URI {redact(uri)!r} names production= more than once", reason=Reason.MALFORMED_URI
        )
    check_production_name(production)
    conninfo = base + ("?" + "&".join(kept) if kept else "")
    params = _libpq_parameters(conninfo, uri)
    for port in (params.get("port") or "").split(","):
        if port and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise InvalidArgumentError(
                f"invalid port {port!r} in PostgreSQL URI {redact(uri)!r}", reason=Reason.MALFORMED_URI
            )
    secrets = _secrets_of(uri, params.get("password"))
    display = scrub(redact(conninfo), secrets)
    separator = "&" if _split_query(display)[1] else "?"
    display = f"{display}{separator}{PRODUCTION_PARAMETER}={production}"
    return PostgresUri(conninfo=conninfo, production=production, display=display, secrets=secrets)


def password_of(uri: str) -> str | None:
    """The password that ``uri`` itself carries (user information or ``password=``), if any."""
    return _libpq_parameters(parse(uri).conninfo, uri).get("password")


def check_production_name(name: str) -> str:
    """``name`` if it is a safe production (schema) name; ``invalid_argument`` otherwise."""
    if not isinstance(name, str) or not PRODUCTION_NAME.fullmatch(name):
        shown = name if isinstance(name, str) and len(name) <= 80 else f"{str(name)[:80]}..."
        raise InvalidArgumentError(
            f"invalid production name {shown!r}: use 1 to 63 lowercase letters, digits and "
            "underscores, not starting with a digit",
            reason=Reason.INVALID_PRODUCTION_NAME,
        )
    if name in RESERVED_NAMES or name.startswith("pg_"):
        raise InvalidArgumentError(
            f"invalid production name {name!r}: it is reserved by PostgreSQL",
            reason=Reason.INVALID_PRODUCTION_NAME,
        )
    return name


def redact(uri: str) -> str:
    """``uri`` without the password of its user information or query (works on malformed URIs too)."""
    match = _ANY_SCHEME.match(uri)
    if match is None:
        return uri
    base, query = _split_query(uri)
    rest = base[match.end() :]
    end = _userinfo_end(rest)
    if end is not None:
        user = rest[:end].partition(":")[0]
        rest = f"{user}@{rest[end + 1 :]}" if user else rest[end + 1 :]
    kept = [pair for pair in query.split("&") if unquote(pair.partition("=")[0]) not in SECRET_PARAMETERS]
    kept = [pair for pair in kept if pair]
    return base[: match.end()] + rest + ("?" + "&".join(kept) if kept else "")


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each of ``secrets`` replaced by ``***`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


def _userinfo_end(rest: str) -> int | None:
    """Index of the ``@`` ending the user information, as libpq finds it (before any ``/``)."""
    for index, char in enumerate(rest):
        if char == "@":
            return index
        if char == "/":
            return None
    return None


def _ambiguous_userinfo(rest: str) -> bool:
    """Whether the text after ``scheme://`` may hold an unencoded ``@``, ``/``, ``?`` or ``#``
    in its password, which libpq would read as part of the host, the database or the query
    (and an error message would then show).

    Hosts never hold an ``@``; a database name or a query value that holds one after a host
    with no user information is read as such a password only when no ``=`` precedes it in
    the query (``?user=ana@studio`` stays valid).
    """
    authority = rest.partition("/")[0]  # where libpq looks for the '@' (a '?' may be the password's)
    if authority.count("@") > 1:
        return True
    if "@" in authority:
        return False
    at = rest.find("@")
    if at < 0:
        return False
    before = rest[len(authority) : at]
    return "?" not in before or "=" not in before.partition("?")[2]


def _split_query(uri: str) -> tuple[str, str]:
    """``(everything before the query, the query)``, with the query found where libpq finds it."""
    match = _ANY_SCHEME.match(uri)
    start = match.end() if match else 0
    end = _userinfo_end(uri[start:])
    after = start if end is None else start + end + 1
    base, _, query = uri[after:].partition("?")
    return uri[:after] + base, query


def _secrets_of(uri: str, password: str | None) -> tuple[str, ...]:
    found = {s for s in (password, os.environ.get("PGPASSWORD")) if s}
    if password:
        found |= {quote(password, safe=""), quote(password)}
    match = _ANY_SCHEME.match(uri)
    rest = uri[match.end() :] if match else uri
    end = _userinfo_end(rest)
    if end is not None and ":" in rest[:end]:
        found.add(rest[:end].partition(":")[2])  # as typed, whatever its encoding
    return tuple(sorted(found - {""}))


def _libpq_parameters(conninfo: str, original: str) -> dict[str, str]:
    """libpq's reading of ``conninfo``; a malformed URI is ``invalid_argument`` (no password shown)."""
    try:
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise UnsupportedError(
            "PostgreSQL productions need psycopg: pip install 'postproject-monitor[postgresql]'",
            reason=Reason.DRIVER_MISSING,
        ) from None
    try:
        params = conninfo_to_dict(conninfo)
    except ProgrammingError as exc:
        secrets = _secrets_of(original, None)
        detail = str(exc).strip().replace(conninfo, redact(conninfo)).replace(original, redact(original))
        raise InvalidArgumentError(
            f"malformed PostgreSQL URI {scrub(redact(original), secrets)!r}: {scrub(detail, secrets)}",
            reason=Reason.MALFORMED_URI,
        ) from None
    return {key: str(value) for key, value in params.items() if value is not None}
