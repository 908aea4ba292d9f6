"""The demo's test clips, kept once made: a clip of the same recipe is copied, not encoded again.

``postproject demo create`` (and ``demo run --fresh``, the Quick start's command) shoots its
clips with PyAV, about two thirds of its time. A clip depends only on its parameters (name,
frames, rate, size, codec, hue) and on the encoder, so each is kept in the user's cache folder
(platformdirs: ``~/.cache/postproject/demo-clips`` on Linux, ``XDG_CACHE_HOME`` honoured) under
a hash of those parameters and the PyAV version, and a later demo copies it.

A clip enters the cache whole or not at all (written beside it, then renamed); a demo gets a
copy, never the cached file itself, so what the demo does to its clips (a truncated delivery,
a re-delivered original) never reaches the cache. A cache that cannot be read or written
(a read-only home, a full disk) only means the clip is encoded, as before. At most
:data:`KEEP` clips are kept (the least recently used go first).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

APP_NAME = "postproject"
FORMAT = 1  # bumped when what a clip is made of changes without its parameters changing
KEEP = 32  # clips kept (the default demo shoots 7, with its re-deliveries)


def folder() -> Path:
    """Where clips are kept."""
    return platformdirs.user_cache_path(APP_NAME, appauthor=False) / "demo-clips"


def key(parameters: dict[str, object]) -> str:
    """The name a clip of these ``parameters`` is kept under (the encoder's version included)."""
    import av  # (loaded only when a clip is asked for)

    described = json.dumps({"format": FORMAT, "av": av.__version__, **parameters}, sort_keys=True)
    return hashlib.sha256(described.encode()).hexdigest()[:32]


def shoot(target: Path, parameters: dict[str, object], make: Callable[[Path], object]) -> bool:
    """Put the clip of ``parameters`` at ``target``: a copy of the kept one, or ``make(target)``
    (then kept). True when it came from the cache."""
    kept = folder() / f"{key(parameters)}.mov"
    try:
        shutil.copyfile(kept, target)
    except OSError:
        make(target)
        with contextlib.suppress(OSError):
            _keep(target, kept)
        return False
    with contextlib.suppress(OSError):  # (a read-only cache still serves)
        os.utime(kept)  # recently used
    return True


def _keep(clip: Path, kept: Path) -> None:
    kept.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=kept.parent, prefix=".incoming-", suffix=".mov")
    os.close(handle)
    try:
        shutil.copyfile(clip, temporary)
        os.replace(temporary, kept)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    clips = sorted(kept.parent.glob("*.mov"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in clips[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
