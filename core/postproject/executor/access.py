"""How a front end reaches a service: its URL, its API token, and a client.

A PRODUCTION argument that starts with ``http://`` or ``https://`` names a service
(``postproject serve``) instead of a production (:func:`is_service_url`). Its API token comes
from ``--token-file FILE`` or ``POSTPROJECT_API_TOKEN`` (:func:`read_token`; never printed).
:func:`connect` makes the HTTP client (:class:`~postproject.executor.remote.ServiceClient`),
importing httpx only then: without the ``service`` extra it is ``unsupported``, naming it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from postproject.model.errors import InvalidArgumentError, IoError, UnsupportedError

if TYPE_CHECKING:
    from postproject.executor.remote import ServiceClient

TOKEN_ENV: Final = "POSTPROJECT_API_TOKEN"
SCHEMES: Final = ("http://", "https://")
MAX_TOKEN_FILE: Final = 4096


def is_service_url(text: object) -> bool:
    """Whether a PRODUCTION argument names a service (``http://`` or ``https://``)."""
    return isinstance(text, str) and text.lower().startswith(SCHEMES)


def read_token(token_file: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The API token from ``token_file`` (its first line), else ``POSTPROJECT_API_TOKEN``.

    Raises:
        InvalidArgumentError: neither is given, or the token is empty or not one line.
        IoError: the file cannot be read.
    """
    env = os.environ if environ is None else environ
    if token_file is not None:
        path = Path(token_file)
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                raise InvalidArgumentError(f"--token-file must be a regular file: {token_file[:200]!r}")
            with path.open("rb") as handle:
                data = handle.read(MAX_TOKEN_FILE + 1)
        except OSError as exc:
            raise IoError(f"cannot read --token-file {token_file[:200]!r}: {exc.strerror or exc}") from None
        if len(data) > MAX_TOKEN_FILE:
            raise InvalidArgumentError(f"--token-file {token_file[:200]!r} is too large for a token")
        text = data.decode("utf-8", "replace").strip()
        where = f"--token-file {token_file[:200]!r}"
    else:
        text = env.get(TOKEN_ENV, "").strip()
        where = TOKEN_ENV
        if not text:
            raise InvalidArgumentError(
                f"a service URL needs an API token: pass --token-file FILE or set {TOKEN_ENV}"
            )
    if not text or any(c.isspace() for c in text) or not text.isprintable():
        raise InvalidArgumentError(f"{where} must hold one API token (one line, no spaces)")
    return text


def connect(url: str, token: str, *, max_connections: int = 64) -> ServiceClient:
    """An HTTP client for the service at ``url`` (unsupported without the service extra)."""
    try:
        from postproject.executor.remote import ServiceClient
    except ImportError as exc:
        raise UnsupportedError(
            f"talking to a service needs the service extra ({exc.name} is missing): "
            "pip install 'postproject-monitor[service]'"
        ) from None
    return ServiceClient(url, token, max_connections=max_connections)
