"""Media layer of the reference executor: test clips, H.264 proxies, thumbnails, probing.

Built on PyAV (FFmpeg's libraries from the PyPI wheel; no system ffmpeg) and Pillow. Every
failure surfaces as :class:`MediaError` with a bounded one-line message. Outputs are written
to a hidden sibling file that is renamed into place only on success, so a failed or stopped
operation never leaves a partial file behind (nor clobbers an existing one).
"""

from __future__ import annotations

import colorsys
import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Final, Literal

import av
import av.error
import numpy as np
from av.container import InputContainer, OutputContainer
from av.video.frame import VideoFrame
from av.video.stream import VideoStream
from PIL import Image, ImageDraw, ImageFont

from postproject.errors import InvalidArgumentError

__all__ = [
    "PROXY_PROFILES",
    "THUMBNAIL_PROFILES",
    "ClipInfo",
    "MediaError",
    "MediaInfo",
    "MediaStopped",
    "ProxyProfile",
    "ThumbnailProfile",
    "generate_test_clip",
    "make_proxy",
    "make_thumbnail",
    "probe",
    "timecode",
]

MAX_MESSAGE_CHARS: Final = 1000
_STILL_FORMATS: Final = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG"}
_VIDEO_FORMATS: Final = {".mp4": "mp4", ".mov": "mov"}
_BT709: Final = 1  # AVCOL_SPC_BT709 == AVCOL_PRI_BT709 == AVCOL_TRC_BT709
_MPEG_RANGE: Final = 1  # AVCOL_RANGE_MPEG: limited ("video") range
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


class MediaError(Exception):
    """A media operation failed: unreadable input, no video, bad suffix, encoder failure."""

    def __init__(self, message: str) -> None:
        text = " ".join(message.split())
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 1] + "…"
        super().__init__(text)


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


def probe(path: Path) -> MediaInfo:
    """Describes a movie (its first video stream) or a still (``.png``/``.jpg``/``.jpeg``).

    Raises:
        MediaError: the file is missing, unreadable or corrupt, or has no video stream.
    """
    with _media_errors(f"cannot probe {path}"):
        if path.suffix.lower() in _STILL_FORMATS:
            return _probe_still(path)
        with av.open(str(path)) as container:
            stream = _video_stream(container, path)
            return MediaInfo(
                stream.codec_context.width,
                stream.codec_context.height,
                stream.frames or None,
                _duration(container, stream),
                stream.codec_context.name,
                container.format.name,
                stream.average_rate or stream.guessed_rate,
            )


def generate_test_clip(
    path: Path,
    *,
    name: str,
    frames: int = 48,
    rate: int = 24,
    size: tuple[int, int] = (1920, 1080),
    codec: Literal["prores", "dnxhd"] = "prores",
    hue: int = 0,
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
        for index in range(frames):
            image = _draw_timecode(background, layout, timecode(index, rate))
            frame = VideoFrame.from_ndarray(np.asarray(image), format="rgb24")
            _encode(out, stream, _to_bt709(frame, spec.pix_fmt), index)
        out.mux(stream.encode(None))
    return ClipInfo(path, name, codec, spec.profile, size[0], size[1], frames, rate)


def make_proxy(
    source: Path,
    output: Path,
    profile: ProxyProfile,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> MediaInfo:
    """Transcodes the first video stream of ``source`` to an H.264 proxy; audio is dropped.

    Args:
        source: any movie PyAV can decode.
        output: the ``.mp4`` or ``.mov`` file to write (replaced on success).
        profile: target height and encoder settings.
        progress: called with strictly increasing fractions; 1.0 once ``output`` is complete.
        should_stop: polled before every frame; returning True stops the transcode.

    Returns:
        :func:`probe` of the finished proxy.

    Raises:
        MediaStopped: ``should_stop()`` returned True; no output is left behind.
        MediaError: bad suffix, unreadable source, no video or encoder failure; no output
            is left behind.
    """
    fmt = _suffix_format(output, _VIDEO_FORMATS, "proxy")
    _check_distinct(source, output)
    report = _Progress(progress)
    with _media_errors(f"cannot make proxy of {source}"), av.open(str(source)) as src:
        stream = _video_stream(src, source)
        stream.thread_type = "AUTO"
        with (
            _atomic_output(output) as tmp,
            av.open(str(tmp), "w", format=fmt, options={"movflags": "+faststart"}) as dst,
        ):
            _transcode(src, stream, dst, profile, report, should_stop)
    report(1.0)
    return probe(output)


def make_thumbnail(source: Path, output: Path, profile: ThumbnailProfile, *, at: float = 0.5) -> MediaInfo:
    """Saves the frame on screen at fraction ``at`` of the duration as a PNG or JPEG.

    Args:
        source: any movie PyAV can decode.
        output: the ``.png``, ``.jpg`` or ``.jpeg`` file to write (replaced on success).
        profile: target width; the height keeps the display aspect.
        at: 0.0 is the first frame, 1.0 the last; sources without a duration give the first.

    Returns:
        :func:`probe` of the written still.

    Raises:
        InvalidArgumentError: ``at`` is outside [0, 1].
        MediaError: bad suffix, unreadable source or no decodable video; no output is left.
    """
    fmt = _suffix_format(output, _STILL_FORMATS, "thumbnail")
    if not 0.0 <= at <= 1.0:
        raise InvalidArgumentError(f"thumbnail position must be within [0, 1], got {at!r}")
    _check_distinct(source, output)
    with _media_errors(f"cannot make thumbnail of {source}"):
        with av.open(str(source)) as src:
            stream = _video_stream(src, source)
            frame = _frame_near(src, stream, Fraction(at))
            height = frame.height * profile.width / _display_width(stream, frame.width)
            rgb = frame.reformat(
                width=profile.width, height=max(1, round(height)), format="rgb24", interpolation="BICUBIC"
            )
            image = Image.fromarray(rgb.to_ndarray(), "RGB")
        with _atomic_output(output) as tmp:
            image.save(tmp, format=fmt, quality=profile.jpeg_quality)
    return probe(output)


@contextlib.contextmanager
def _media_errors(action: str) -> Iterator[None]:
    """Re-raises FFmpeg, OS, Pillow and codec-lookup failures as :class:`MediaError`."""
    try:
        yield
    except (MediaError, InvalidArgumentError):
        raise
    except (av.error.FFmpegError, OSError, ValueError, Image.DecompressionBombError) as exc:
        reason = re.sub(r"^\[Errno -?\d+\] ", "", str(exc)) or type(exc).__name__
        raise MediaError(f"{action}: {reason}") from exc


@contextlib.contextmanager
def _atomic_output(output: Path) -> Iterator[Path]:
    """Yields a hidden sibling path that replaces ``output`` on success, else is removed."""
    tmp = output.with_name(f".{output.name}.{uuid.uuid4().hex[:8]}.part")
    try:
        yield tmp
        os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)


def _suffix_format(path: Path, formats: Mapping[str, str], what: str) -> str:
    suffix = path.suffix.lower()
    if suffix not in formats:
        expected = ", ".join(sorted(formats))
        raise MediaError(f"unsupported {what} suffix {suffix!r} for {path.name} (use {expected})")
    return formats[suffix]


def _check_distinct(source: Path, output: Path) -> None:
    if source.resolve() == output.resolve():
        raise MediaError(f"output must differ from the source: {output}")


def _probe_still(path: Path) -> MediaInfo:
    with Image.open(path) as image:
        image.load()
        kind = (image.format or path.suffix.lstrip(".")).lower()
        return MediaInfo(image.width, image.height, 1, None, kind, kind)


def _video_stream(container: InputContainer, path: Path) -> VideoStream:
    if not container.streams.video:
        raise MediaError(f"no video stream in {path}")
    stream = container.streams.video[0]
    if stream.codec_context.width <= 0 or stream.codec_context.height <= 0:
        raise MediaError(f"the video stream of {path} has no frame size")
    return stream


def _duration(container: InputContainer, stream: VideoStream) -> Fraction | None:
    if stream.duration is not None and stream.time_base is not None:
        return stream.duration * stream.time_base
    if container.duration is not None:
        return Fraction(container.duration, av.time_base)
    return None


def _display_width(stream: VideoStream, width: int) -> Fraction:
    sar = stream.sample_aspect_ratio
    return Fraction(width) * (sar if sar is not None and sar > 0 else 1)


def _frame_near(src: InputContainer, stream: VideoStream, at: Fraction) -> VideoFrame:
    """Decodes the frame on screen at ``at`` of the duration (the first one if unknown)."""
    duration, time_base = _duration(src, stream), stream.time_base
    target: int | None = None
    if duration and time_base:
        target = int(duration * at / time_base) + (stream.start_time or 0)
        with contextlib.suppress(av.error.FFmpegError):
            src.seek(target, stream=stream, backward=True)
    chosen: VideoFrame | None = None
    for frame in src.decode(stream):
        if chosen is not None and (target is None or (frame.pts or 0) > target):
            break
        chosen = frame
    if chosen is None:
        raise MediaError(f"no decodable video frames in {src.name}")
    return chosen


class _Progress:
    """Forwards strictly increasing fractions to an optional callback."""

    def __init__(self, callback: Callable[[float], None] | None) -> None:
        self._callback, self._last = callback, 0.0

    def __call__(self, fraction: float) -> None:
        if self._callback is not None and fraction > self._last:
            self._last = fraction
            self._callback(fraction)


def _add_video_stream(
    out: OutputContainer, encoder: str, rate: Fraction, options: dict[str, str]
) -> VideoStream:
    stream = out.add_stream(encoder, rate=rate, options=options)
    if not isinstance(stream, VideoStream):
        raise MediaError(f"{encoder} is not a video encoder")
    context = stream.codec_context
    context.colorspace = context.color_primaries = context.color_trc = _BT709
    context.color_range = _MPEG_RANGE
    return stream


def _to_bt709(frame: VideoFrame, pix_fmt: str, size: tuple[int, int] | None = None) -> VideoFrame:
    width, height = size or (None, None)
    return frame.reformat(
        width=width,
        height=height,
        format=pix_fmt,
        dst_colorspace="ITU709",
        dst_color_range="MPEG",
        interpolation="BICUBIC",
    )


def _encode(out: OutputContainer, stream: VideoStream, frame: VideoFrame, index: int) -> None:
    """Encodes ``frame`` as frame number ``index`` of a constant-rate stream."""
    frame.pts, frame.time_base = index, 1 / stream.codec_context.framerate
    out.mux(stream.encode(frame))


def _fits(size: tuple[int, int], minimum: tuple[int, int]) -> bool:
    return size[0] >= minimum[0] and size[1] >= minimum[1]


def _even(value: Fraction) -> int:
    return max(2, 2 * round(value / 2))


def _frame_count(container: InputContainer, stream: VideoStream) -> int | None:
    if stream.frames > 0:
        return stream.frames
    duration, rate = _duration(container, stream), stream.average_rate or stream.guessed_rate
    if duration is None or rate is None:
        return None
    return round(duration * rate) or None


def _transcode(
    src: InputContainer,
    stream: VideoStream,
    dst: OutputContainer,
    profile: ProxyProfile,
    report: _Progress,
    should_stop: Callable[[], bool] | None,
) -> None:
    rate = stream.average_rate or stream.guessed_rate or Fraction(24)
    options = {"crf": str(profile.crf), "preset": profile.preset}
    out = _add_video_stream(dst, profile.codec, rate, options)
    ctx = stream.codec_context
    width = _display_width(stream, ctx.width) * profile.height / ctx.height
    size = (_even(width), _even(Fraction(profile.height)))
    out.width, out.height, out.pix_fmt = size[0], size[1], profile.pix_fmt
    if "timecode" in stream.metadata:
        out.metadata["timecode"] = stream.metadata["timecode"]
    total, written = _frame_count(src, stream), 0
    for frame in src.decode(stream):
        if should_stop is not None and should_stop():
            raise MediaStopped(f"stopped making a proxy of {src.name} after {written} frames")
        _encode(dst, out, _to_bt709(frame, profile.pix_fmt, size), written)
        written += 1
        if total:
            report(min(written / total, 0.99))
    if written == 0:
        raise MediaError(f"no decodable video frames in {src.name}")
    dst.mux(out.encode(None))


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
    ramp = np.linspace(0.0, 1.0, width)[None, :, None] * np.array(accent)[None, None, :]
    gradient = np.repeat(ramp.round().astype(np.uint8), height - castle_end, axis=0)
    image.paste(Image.fromarray(gradient, "RGB"), (0, castle_end))
    plate = (width // 10, height * 62 // 100, width - width // 10, height * 96 // 100)
    draw.rectangle(plate, fill=_PLATE, outline=accent, width=max(1, height // 200))
    _draw_name(draw, name, plate)
    return image, _timecode_layout(plate)


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
