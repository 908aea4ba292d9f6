"""What the reference executor's media jobs are, without the media libraries: the profiles a
job names, what a probe reports, and the errors a media operation raises.

:mod:`postproject.executor.media` does the work with PyAV and Pillow (about 0.1 s to import);
this module lets the command line, the worker's planning and its error handling use the names
without importing them (``postproject --help`` and every command that makes no media).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from postproject.model.errors import InvalidArgumentError

__all__ = [
    "MAX_MESSAGE_CHARS",
    "PROXY_PROFILES",
    "THUMBNAIL_PROFILES",
    "MediaError",
    "MediaInfo",
    "MediaStopped",
    "ProxyProfile",
    "ThumbnailProfile",
]

MAX_MESSAGE_CHARS: Final = 1000


class MediaError(Exception):
    """A media operation failed: unreadable input, no video, bad suffix, encoder failure.

    ``retryable`` tells a tool crash that another attempt may get past (an encoder or I/O
    failure) from bad input that no attempt will fix (a corrupt or missing source)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        text = " ".join(message.split())
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 1] + "…"
        super().__init__(text)
        self.retryable = retryable


class MediaStopped(MediaError):
    """The operation stopped cooperatively because ``should_stop()`` returned True."""


@dataclass(frozen=True, slots=True)
class MediaInfo:
    """What :func:`probe` reports about a movie's first video stream or a still image."""

    width: int
    height: int
    frames: int | None
    duration_seconds: Fraction | None
    codec: str  # FFmpeg codec name ("prores", "h264", ...) or Pillow format ("png", "jpeg")
    container: str  # FFmpeg demuxer name ("mov,mp4,m4a,3gp,3g2,mj2") or "png" / "jpeg"
    frame_rate: Fraction | None = None


@dataclass(frozen=True, slots=True)
class ProxyProfile:
    """An H.264 proxy scaled to ``height``, keeping the display aspect, even dimensions."""

    name: str
    height: int
    crf: int = 23
    preset: str = "veryfast"
    codec: str = "libx264"
    pix_fmt: str = "yuv420p"

    def __post_init__(self) -> None:
        if self.height < 2 or not 0 <= self.crf <= 51:
            raise InvalidArgumentError(f"bad proxy profile {self.name}: {self.height=} {self.crf=}")


@dataclass(frozen=True, slots=True)
class ThumbnailProfile:
    """A still scaled to ``width``, keeping the display aspect."""

    name: str
    width: int
    jpeg_quality: int = 88

    def __post_init__(self) -> None:
        if self.width < 1 or not 1 <= self.jpeg_quality <= 95:
            raise InvalidArgumentError(f"bad thumbnail profile {self.name}: {self.width=}")


PROXY_PROFILES: Final[Mapping[str, ProxyProfile]] = {
    p.name: p for p in (ProxyProfile("proxy-720p", 720), ProxyProfile("proxy-1080p", 1080))
}
THUMBNAIL_PROFILES: Final[Mapping[str, ThumbnailProfile]] = {
    p.name: p for p in (ThumbnailProfile("thumbnail-640", 640), ThumbnailProfile("thumbnail-1280", 1280))
}
