"""Validation of names and bounded text (notes §1.4-1.5)."""

from __future__ import annotations

import functools
import re
import unicodedata

from postproject.model.errors import InvalidArgumentError

_NAMESPACED = re.compile(r"[A-Za-z0-9._:-]+")
MAX_NAMESPACED_BYTES = 128
MAX_ROOT_NAME_BYTES = 128


def namespaced(field: str, value: object) -> str:
    """Validate a namespaced identifier such as ``org.example:generate-proxy``.

    ASCII letters, digits and ``. _ - :`` only; at least one ``:`` with non-empty text on
    both sides of the first one; at most 128 bytes.
    """
    if type(value) is str and len(value) <= MAX_NAMESPACED_BYTES and _valid_namespaced(value):
        return value  # kinds repeat on every job: each is checked once
    return _checked_namespaced(field, value)


@functools.lru_cache(maxsize=4096)
def _valid_namespaced(text: str) -> bool:
    """Whether ``text`` (at most 128 characters, so the cache stays small) is valid."""
    try:
        _checked_namespaced("namespaced identifier", text)
    except InvalidArgumentError:
        return False
    return True


def _checked_namespaced(field: str, value: object) -> str:
    text = _text(field, value)
    if len(text.encode()) > MAX_NAMESPACED_BYTES:
        raise InvalidArgumentError(
            f"{field} must be at most {MAX_NAMESPACED_BYTES} bytes; got {len(text.encode())} bytes"
        )
    head, colon, tail = text.partition(":")
    if not _NAMESPACED.fullmatch(text) or not colon or not head or not tail:
        raise InvalidArgumentError(
            f"{field} must be a namespaced identifier like 'org.example:name' "
            f"(ASCII letters, digits, '.', '_', '-', ':'); got {text[:140]!r}"
        )
    return text


def root_name(field: str, value: object) -> str:
    """Validate a media-root name: 1-128 bytes, no surrounding space, controls, '/' or '\\'."""
    text = _text(field, value)
    size = len(text.encode())
    if not 1 <= size <= MAX_ROOT_NAME_BYTES:
        raise InvalidArgumentError(f"{field} must be 1-{MAX_ROOT_NAME_BYTES} bytes; got {size} bytes")
    if text != text.strip() or "/" in text or "\\" in text or has_control(text):
        raise InvalidArgumentError(
            f"{field} must not have leading or trailing whitespace, control characters, "
            f"'/' or '\\'; got {text[:140]!r}"
        )
    return text


def bounded_text(field: str, value: object, max_bytes: int, *, min_bytes: int = 1) -> str:
    """Validate text of ``min_bytes``-``max_bytes`` UTF-8 bytes without NUL."""
    text = _text(field, value)
    size = len(text.encode("utf-8", "surrogatepass"))
    if not min_bytes <= size <= max_bytes:
        raise InvalidArgumentError(f"{field} must be {min_bytes}-{max_bytes} UTF-8 bytes; got {size} bytes")
    if "\x00" in text:
        raise InvalidArgumentError(f"{field} must not contain NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(f"{field} must be valid Unicode text (no lone surrogates)") from exc
    return text


def utf8_text(field: str, value: object) -> str:
    """``value`` if it is text that UTF-8 can hold (a path stored as text, such as a media
    root's); ``invalid_argument`` naming the first byte that is not UTF-8 otherwise."""
    return _text(field, value)


def _text(field: str, value: object) -> str:
    """``value`` if it is text that UTF-8 can hold.

    Lone surrogates are refused: they are what a command line or a file name carries for
    bytes that are not UTF-8 (Python's ``surrogateescape``), and no name can store them.
    """
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{field} must be text; got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise InvalidArgumentError(
            f"{field} must be valid UTF-8 text; got '{shown[:140]}' (character {exc.start} is a byte that "
            "is not UTF-8)"
        ) from None
    return value


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)
