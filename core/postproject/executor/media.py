"""Media layer of the reference executor: H.264 proxies, thumbnails, probing.

Test clips live in :mod:`postproject.executor.testclip`.

Built on PyAV (FFmpeg's libraries from the PyPI wheel; no system ffmpeg) and Pillow. Every
failure surfaces as :class:`MediaError` with a bounded one-line message. Outputs are written
to a hidden sibling file that is renamed into place only on success, so a failed or stopped
operation never leaves a partial file behind (nor clobbers an existing one).
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Final

import av
import av.error
from av.audio.frame import AudioFrame
from av.audio.stream import AudioStream
from av.container import InputContainer, OutputContainer
from av.video.frame import VideoFrame
from av.video.stream import VideoStream
from PIL import Image

from postproject.executor.profiles import (
    MediaError,
    MediaInfo,
    MediaStopped,
    ProxyProfile,
    ThumbnailProfile,
)
from postproject.model.errors import InvalidArgumentError

__all__ = ["make_proxy", "make_thumbnail", "probe"]  # (the profiles and errors: executor.profiles)

_STILL_FORMATS: Final = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG"}
_VIDEO_FORMATS: Final = {".mp4": "mp4", ".mov": "mov"}
_BT709: Final = 1  # AVCOL_SPC_BT709 == AVCOL_PRI_BT709 == AVCOL_TRC_BT709
_MPEG_RANGE: Final = 1  # AVCOL_RANGE_MPEG: limited ("video") range


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


def make_proxy(
    source: Path,
    output: Path,
    profile: ProxyProfile,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    frames: Callable[[int, int | None], None] | None = None,
) -> MediaInfo:
    """Transcodes the first video stream of ``source`` to an H.264 proxy, and its first audio
    stream (if any) to AAC (stereo at most, the source's sample rate when AAC supports it).

    Args:
        source: any movie PyAV can decode.
        output: the ``.mp4`` or ``.mov`` file to write (replaced on success).
        profile: target height and encoder settings.
        progress: called with strictly increasing fractions; 1.0 once ``output`` is complete.
        should_stop: polled before every frame; returning True stops the transcode.
        frames: called after every encoded frame with (frames done, frames in total or None).

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
        audio = src.streams.audio[0] if src.streams.audio else None
        with (
            _atomic_output(output) as tmp,
            av.open(str(tmp), "w", format=fmt, options={"movflags": "+faststart"}) as dst,
        ):
            _transcode(src, stream, audio, dst, profile, report, should_stop, frames)
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
            image: Image.Image = rgb.to_image()  # type: ignore[no-untyped-call]
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
        raise MediaError(f"{action}: {reason}", retryable=not isinstance(exc, _BAD_INPUT)) from exc


# Failures that say the input is bad: another attempt would fail the same way.
_BAD_INPUT = (
    av.error.InvalidDataError,
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    PermissionError,
    ValueError,
    Image.DecompressionBombError,
)


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


def _even(value: Fraction) -> int:
    return max(2, 2 * round(value / 2))


def _frame_count(container: InputContainer, stream: VideoStream) -> int | None:
    if stream.frames > 0:
        return stream.frames
    duration, rate = _duration(container, stream), stream.average_rate or stream.guessed_rate
    if duration is None or rate is None:
        return None
    return round(duration * rate) or None


AAC_RATES: Final = (96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000)
AAC_BIT_RATE: Final = 128_000


def _add_audio_stream(out: OutputContainer, source: AudioStream) -> AudioStream:
    """An AAC stream for ``source``: mono stays mono, more channels become stereo."""
    rate = source.codec_context.sample_rate or 48000
    if rate not in AAC_RATES:
        rate = 48000
    layout = "mono" if source.codec_context.channels == 1 else "stereo"
    stream = out.add_stream("aac", rate=rate, layout=layout)
    if not isinstance(stream, AudioStream):  # pragma: no cover - FFmpeg's aac is an audio encoder
        raise MediaError("aac is not an audio encoder")
    stream.bit_rate = AAC_BIT_RATE
    return stream


def _transcode(
    src: InputContainer,
    stream: VideoStream,
    audio: AudioStream | None,
    dst: OutputContainer,
    profile: ProxyProfile,
    report: _Progress,
    should_stop: Callable[[], bool] | None,
    frames: Callable[[int, int | None], None] | None = None,
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
    sound = _add_audio_stream(dst, audio) if audio is not None else None
    total, written = _frame_count(src, stream), 0
    wanted = (stream, audio) if audio is not None else (stream,)
    for packet in src.demux(*wanted):
        if packet.stream is audio and sound is not None:
            for samples in packet.decode():
                if isinstance(samples, AudioFrame):
                    samples.pts = None  # let the encoder's resampler count samples from zero
                    dst.mux(sound.encode(samples))
            continue
        for frame in packet.decode():
            if not isinstance(frame, VideoFrame):
                continue
            if should_stop is not None and should_stop():
                raise MediaStopped(f"stopped making a proxy of {src.name} after {written} frames")
            _encode(dst, out, _to_bt709(frame, profile.pix_fmt, size), written)
            written += 1
            if total:
                report(min(written / total, 0.99))
            if frames is not None:
                frames(written, total)
    if written == 0:
        raise MediaError(f"no decodable video frames in {src.name}")
    dst.mux(out.encode(None))
    if sound is not None:
        dst.mux(sound.encode(None))
