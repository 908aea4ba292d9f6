"""Test clips for demos and tests: colour bars, a hue gradient, a burnt-in name and timecode.

Written with PyAV (ProRes 422 Proxy or DNxHR LB in QuickTime) and Pillow; moved out of
:mod:`postproject.executor.media`, whose atomic-output and encoding helpers it shares.
"""

from __future__ import annotations

import colorsys
import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Final, Literal

import av
from av.audio.frame import AudioFrame
from av.audio.stream import AudioStream
from av.video.frame import VideoFrame
from PIL import Image, ImageDraw, ImageFont

from postproject.executor.media import (
    _add_video_stream,
    _atomic_output,
    _encode,
    _media_errors,
    _suffix_format,
    _to_bt709,
)
from postproject.model.errors import InvalidArgumentError

__all__ = ["ClipInfo", "generate_test_clip", "timecode"]

_QP2LAMBDA: Final = 118  # FFmpeg's FF_QP2LAMBDA: global_quality = qscale * 118
_TEXT: Final = (235, 235, 235)
_PLATE: Final = (12, 12, 12)
_BARS: Final = (
    (191, 191, 191),
    (191, 191, 0),
    (0, 191, 191),
    (0, 191, 0),
    (191, 0, 191),
    (191, 0, 0),
    (0, 0, 191),
)  # 75% SMPTE colour bars
_CASTELLATIONS: Final = (
    (0, 0, 191),
    (16, 16, 16),
    (191, 0, 191),
    (16, 16, 16),
    (0, 191, 191),
    (16, 16, 16),
    (191, 191, 191),
)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
Plate = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class ClipInfo:
    """A test clip written by :func:`generate_test_clip`."""

    path: Path
    name: str
    codec: str
    profile: str
    width: int
    height: int
    frames: int
    rate: int

    @property
    def duration_seconds(self) -> Fraction:
        """The exact duration, ``frames / rate``."""
        return Fraction(self.frames, self.rate)


@dataclass(frozen=True, slots=True)
class _ClipCodec:
    encoder: str
    pix_fmt: str
    profile: str
    options: tuple[tuple[str, str], ...]
    min_size: tuple[int, int] = (16, 16)


# prores_ks with a fixed quantiser (qscale 8) skips its per-slice rate-control search, about
# 3x faster. DNxHR LB takes any size from 256x120 up, unlike the fixed-size DNxHD profiles.
_CLIP_CODECS: Final[Mapping[str, _ClipCodec]] = {
    "prores": _ClipCodec(
        "prores_ks",
        "yuv422p10le",
        "proxy",
        (
            ("profile", "proxy"),
            ("vendor", "apl0"),
            ("flags", "+qscale"),
            ("global_quality", str(8 * _QP2LAMBDA)),
        ),
    ),
    "dnxhd": _ClipCodec("dnxhd", "yuv422p", "dnxhr_lb", (("profile", "dnxhr_lb"),), (256, 120)),
}


def timecode(frame_index: int, rate: int) -> str:
    """Formats a zero-based frame index as non-drop SMPTE timecode ``HH:MM:SS:FF``.

    Args:
        frame_index: zero-based frame number.
        rate: integer frames per second, e.g. ``timecode(49, 24) == "00:00:02:01"``.
    """
    seconds, frame = divmod(frame_index, rate)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}:{frame:02d}"


def generate_test_clip(
    path: Path,
    *,
    name: str,
    frames: int = 48,
    rate: int = 24,
    size: tuple[int, int] = (1920, 1080),
    codec: Literal["prores", "dnxhd"] = "prores",
    hue: int = 0,
    audio: bool = False,
) -> ClipInfo:
    """Writes a QuickTime test clip: colour bars, a ``hue`` gradient, name and timecode.

    Args:
        path: the ``.mov`` file to write (replaced on success).
        name: clip name burnt into every frame (shrunk to fit).
        frames: number of frames, at least 1.
        rate: integer frame rate; the burnt-in timecode (and the QuickTime timecode track)
            starts at 00:00:00:00.
        size: ``(width, height)``; at least 16x16 for ProRes, 256x120 for DNxHR.
        codec: ``"prores"`` (ProRes 422 Proxy, 10-bit) or ``"dnxhd"`` (DNxHR LB, 8-bit).
        hue: hue in degrees of the gradient and plate outline.
        audio: also write a mono 48 kHz PCM track with a 1 kHz tone for the whole clip.

    Raises:
        InvalidArgumentError: ``frames``, ``rate``, ``size`` or ``codec`` is out of range.
        MediaError: the suffix is not ``.mov``, or encoding or writing failed.
    """
    spec = _CLIP_CODECS.get(codec)
    if spec is None or frames < 1 or rate < 1 or not _fits(size, spec.min_size):
        raise InvalidArgumentError(f"bad test clip parameters: {frames=} {rate=} {size=} {codec=}")
    _suffix_format(path, {".mov": "mov"}, "test clip")
    background, layout = _render_background(size, name, hue)
    with (
        _media_errors(f"cannot write test clip {path}"),
        _atomic_output(path) as tmp,
        av.open(str(tmp), "w", format="mov") as out,
    ):
        out.metadata["title"] = name
        stream = _add_video_stream(out, spec.encoder, Fraction(rate), dict(spec.options))
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], spec.pix_fmt
        stream.metadata["timecode"] = timecode(0, rate)
        sound = out.add_stream("pcm_s16le", rate=TONE_RATE, layout="mono") if audio else None
        for index in range(frames):
            image = _draw_timecode(background, layout, timecode(index, rate))
            frame = VideoFrame.from_image(image)  # type: ignore[no-untyped-call]
            _encode(out, stream, _to_bt709(frame, spec.pix_fmt), index)
            if isinstance(sound, AudioStream):
                first, end = index * TONE_RATE // rate, (index + 1) * TONE_RATE // rate
                out.mux(sound.encode(_tone(first, end)))
        out.mux(stream.encode(None))
        if isinstance(sound, AudioStream):
            out.mux(sound.encode(None))
    return ClipInfo(path, name, codec, spec.profile, size[0], size[1], frames, rate)


TONE_RATE: Final = 48_000
TONE_HZ: Final = 1_000


def _tone(first: int, end: int) -> AudioFrame:
    """Samples ``first`` to ``end`` (exclusive) of a 1 kHz sine at -12 dBFS, mono s16."""
    amplitude = 32767 // 4
    samples = array(
        "h", (round(amplitude * math.sin(2 * math.pi * TONE_HZ * n / TONE_RATE)) for n in range(first, end))
    )
    frame = AudioFrame(format="s16", layout="mono", samples=end - first)
    frame.planes[0].update(samples.tobytes())
    frame.sample_rate, frame.pts, frame.time_base = TONE_RATE, first, Fraction(1, TONE_RATE)
    return frame


def _fits(size: tuple[int, int], minimum: tuple[int, int]) -> bool:
    return size[0] >= minimum[0] and size[1] >= minimum[1]


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where the per-frame timecode goes: one fixed-width cell per character."""

    font: Font
    centres: tuple[int, ...]
    y: int


def _font(size: int) -> Font:
    return ImageFont.load_default(size=max(8, size))  # Aileron, bundled with Pillow


def _render_background(size: tuple[int, int], name: str, hue: int) -> tuple[Image.Image, _Layout]:
    """Draws everything static once: bars, castellations, gradient and the name plate."""
    width, height = size
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    bars_end, castle_end = height * 50 // 100, height * 58 // 100
    _draw_bars(draw, width, 0, bars_end, _BARS)
    _draw_bars(draw, width, bars_end, castle_end, _CASTELLATIONS)
    red, green, blue = colorsys.hsv_to_rgb((hue % 360) / 360, 0.85, 0.95)
    accent = (round(red * 255), round(green * 255), round(blue * 255))
    image.paste(_ramp(accent, width, height - castle_end), (0, castle_end))
    plate = (width // 10, height * 62 // 100, width - width // 10, height * 96 // 100)
    draw.rectangle(plate, fill=_PLATE, outline=accent, width=max(1, height // 200))
    _draw_name(draw, name, plate)
    return image, _timecode_layout(plate)


def _ramp(colour: tuple[int, int, int], width: int, height: int) -> Image.Image:
    """A horizontal ramp from black (left) to ``colour`` (right)."""
    last = max(1, width - 1)
    row = Image.new("RGB", (width, 1))
    row.putdata([tuple(round(c * x / last) for c in colour) for x in range(width)])
    return row.resize((width, height), Image.Resampling.NEAREST)


def _draw_bars(
    draw: ImageDraw.ImageDraw, width: int, top: int, bottom: int, colours: tuple[tuple[int, int, int], ...]
) -> None:
    for index, colour in enumerate(colours):
        left, right = index * width // len(colours), (index + 1) * width // len(colours)
        draw.rectangle((left, top, right - 1, bottom - 1), fill=colour)


def _draw_name(draw: ImageDraw.ImageDraw, name: str, plate: Plate) -> None:
    left, top, right, bottom = plate
    size, room = (bottom - top) * 22 // 100, (right - left) * 92 // 100
    font = _font(size)
    while size > 8 and font.getlength(name) > room:
        size = size * 9 // 10
        font = _font(size)
    centre = ((left + right) // 2, top + (bottom - top) * 27 // 100)
    draw.text(centre, name, font=font, fill=_TEXT, anchor="mm")


def _timecode_layout(plate: Plate) -> _Layout:
    left, top, right, bottom = plate
    font = _font((bottom - top) * 42 // 100)
    digit = max(int(font.getlength(d)) + 1 for d in "0123456789")
    cells = [int(font.getlength(":")) + 1 if c == ":" else digit for c in "00:00:00:00"]
    x, centres = (left + right - sum(cells)) // 2, []
    for cell in cells:
        centres.append(x + cell // 2)
        x += cell
    return _Layout(font, tuple(centres), top + (bottom - top) * 68 // 100)


def _draw_timecode(background: Image.Image, layout: _Layout, text: str) -> Image.Image:
    image = background.copy()
    draw = ImageDraw.Draw(image)
    for x, char in zip(layout.centres, text, strict=True):
        draw.text((x, layout.y), char, font=layout.font, fill=_TEXT, anchor="mm")
    return image
