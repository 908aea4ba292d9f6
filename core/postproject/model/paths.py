"""Representation paths as stored: every name a filesystem allows round-trips exactly."""

from __future__ import annotations

import base64
import os

_ENCODED = "\x01"  # never the first character of a stored name otherwise (see encode_path)


def encode_path(text: str) -> str:
    """A representation path as stored: itself, or, when it is not valid UTF-8 (a name
    decoded with ``surrogateescape`` from an old file server's Latin-1 bytes), its raw bytes
    in base64 behind a marker, so every name a filesystem allows round-trips exactly."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        if not text.startswith(_ENCODED):
            return text
    return _ENCODED + base64.urlsafe_b64encode(os.fsencode(text)).decode("ascii")


def decode_path(stored: str) -> str:
    """The path :func:`encode_path` stored."""
    if stored.startswith(_ENCODED):
        return os.fsdecode(base64.urlsafe_b64decode(stored[1:]))
    return stored
