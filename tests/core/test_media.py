"""Tests for the reference executor's media layer, on real files written with PyAV."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from postproject.executor.media import make_proxy, make_thumbnail, probe
from postproject.executor.profiles import (
    MAX_MESSAGE_CHARS,
    PROXY_PROFILES,
    THUMBNAIL_PROFILES,
    MediaError,
    MediaStopped,
    ProxyProfile,
    ThumbnailProfile,
)
from postproject.executor.testclip import ClipInfo, generate_test_clip, timecode
from postproject.model.errors import InvalidArgumentError

# 720 / 176 is not an integer, so the 720p proxy width (1309.09) must be rounded to even.
SIZE = (320, 176)
FRAMES = 12
RATE = 24
PROXY_720 = PROXY_PROFILES["proxy-720p"]
THUMB_640 = THUMBNAIL_PROFILES["thumbnail-640"]


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> ClipInfo:
    path = tmp_path_factory.mktemp("clips") / "A001C003.mov"
    return generate_test_clip(path, name="A001C003", frames=FRAMES, size=SIZE, hue=210)


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    """An empty directory for outputs, so tests can assert nothing else was left there."""
    path = tmp_path / "out"
    path.mkdir()
    return path


def decode_rgb(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def changed_rows(a: np.ndarray, b: np.ndarray, threshold: int = 40) -> np.ndarray:
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    return np.flatnonzero((diff > threshold).any(axis=1))


def write_av_file(path: Path, *, with_video: bool) -> None:
    """A QuickTime file with PCM audio and, optionally, a short MJPEG video stream."""
    with av.open(str(path), "w") as out:
        video = out.add_stream("mjpeg", rate=24) if with_video else None
        if video is not None:
            video.width, video.height, video.pix_fmt = 64, 48, "yuvj420p"
        audio = out.add_stream("pcm_s16le", rate=48000)
        audio.layout = "mono"
        for index in range(6):
            if video is not None:
                pixels = np.full((48, 64, 3), index * 40, np.uint8)
                out.mux(video.encode(av.VideoFrame.from_ndarray(pixels)))
            samples = np.zeros((1, 2000), np.int16)
            frame = av.AudioFrame.from_ndarray(samples, format="s16", layout="mono")
            frame.sample_rate, frame.pts = 48000, index * 2000
            out.mux(audio.encode(frame))
        if video is not None:
            out.mux(video.encode(None))
        out.mux(audio.encode(None))


def assert_one_line(error: MediaError) -> None:
    message = str(error)
    assert message
    assert "\n" not in message
    assert len(message) <= MAX_MESSAGE_CHARS
    assert "Traceback" not in message


# --- timecode and test clips ------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "rate", "expected"),
    [
        (0, 24, "00:00:00:00"),
        (23, 24, "00:00:00:23"),
        (49, 24, "00:00:02:01"),
        (25 * 3600 + 25 * 61 + 3, 25, "01:01:01:03"),
    ],
)
def test_timecode_is_non_drop_smpte(index: int, rate: int, expected: str) -> None:
    assert timecode(index, rate) == expected


@pytest.mark.parametrize(
    ("codec", "codec_name", "pix_fmt"),
    [("prores", "prores", "yuv422p10le"), ("dnxhd", "dnxhd", "yuv422p")],
)
def test_generated_clip_probes_as_requested(
    tmp_path: Path, codec: str, codec_name: str, pix_fmt: str
) -> None:
    path = tmp_path / "clip.mov"
    info = generate_test_clip(path, name="A001C001", frames=FRAMES, size=SIZE, codec=codec)  # type: ignore[arg-type]
    assert (info.path, info.codec, info.width, info.height) == (path, codec, *SIZE)
    assert info.duration_seconds == Fraction(FRAMES, RATE)
    probed = probe(path)
    assert probed.codec == codec_name
    assert (probed.width, probed.height, probed.frames) == (*SIZE, FRAMES)
    assert probed.duration_seconds == Fraction(FRAMES, RATE)
    assert probed.frame_rate == RATE
    assert "mov" in probed.container
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.pix_fmt == pix_fmt
        assert stream.metadata["timecode"] == "00:00:00:00"
        assert container.metadata["major_brand"].strip() == "qt"
    assert [p.name for p in tmp_path.iterdir()] == ["clip.mov"]


def test_burnt_in_timecode_changes_from_frame_to_frame(clip: ClipInfo) -> None:
    frames = decode_rgb(clip.path)
    assert len(frames) == FRAMES
    first, last = frames[0], frames[-1]  # 00:00:00:00 and 00:00:00:11
    rows = changed_rows(first, last)
    assert rows.size > 0
    assert rows.min() > SIZE[1] * 0.6  # only the timecode below the bars changed
    np.testing.assert_allclose(first[: SIZE[1] // 2], last[: SIZE[1] // 2], atol=4)
    assert changed_rows(frames[1], frames[2]).size > 0  # ...:01 vs ...:02


def test_burnt_in_name_sits_above_the_timecode(tmp_path: Path) -> None:
    def first_frame(name: str, frames: int) -> np.ndarray:
        path = tmp_path / f"{name}-{frames}.mov"
        generate_test_clip(path, name=name, frames=frames, size=SIZE)
        return decode_rgb(path)[-1]

    name_rows = changed_rows(first_frame("A001C001", 1), first_frame("B042C007_LONGNAME", 1))
    tc_rows = changed_rows(first_frame("A001C001", 1), first_frame("A001C001", 2))
    assert name_rows.size > 0
    assert tc_rows.size > 0
    assert SIZE[1] * 0.58 < name_rows.min() <= name_rows.max() < tc_rows.min()


def test_hue_colours_the_gradient(tmp_path: Path) -> None:
    corners = []
    for hue in (0, 120, 240):
        path = tmp_path / f"hue{hue}.mov"
        generate_test_clip(path, name="hue", frames=1, size=SIZE, hue=hue)
        corners.append(decode_rgb(path)[0][-3, -3].astype(int))
    assert [int(np.argmax(corner)) for corner in corners] == [0, 1, 2]


def test_generate_rejects_bad_parameters(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError):
        generate_test_clip(tmp_path / "a.mov", name="a", frames=0, size=SIZE)
    with pytest.raises(InvalidArgumentError, match="size"):
        generate_test_clip(tmp_path / "a.mov", name="a", size=(128, 72), codec="dnxhd")
    with pytest.raises(MediaError, match="suffix"):
        generate_test_clip(tmp_path / "a.mp4", name="a", frames=1, size=SIZE)
    assert list(tmp_path.iterdir()) == []


# --- proxies ----------------------------------------------------------------------------


@pytest.mark.parametrize(("suffix", "brand"), [(".mp4", "isom"), (".mov", "qt")])
def test_make_proxy_writes_h264_at_profile_height(
    clip: ClipInfo, out_dir: Path, suffix: str, brand: str
) -> None:
    output = out_dir / f"proxy{suffix}"
    reported: list[float] = []
    info = make_proxy(clip.path, output, PROXY_720, progress=reported.append)
    assert (info.codec, info.width, info.height, info.frames) == ("h264", 1310, 720, FRAMES)
    assert info.duration_seconds == Fraction(FRAMES, RATE)
    frames = decode_rgb(output)
    assert len(frames) == FRAMES
    assert frames[0].shape == (720, 1310, 3)
    with av.open(str(output)) as container:
        assert container.metadata["major_brand"].strip() == brand
        assert container.streams.video[0].metadata["timecode"] == "00:00:00:00"
    assert reported[-1] == 1.0
    assert all(0.0 < a < b <= 1.0 for a, b in itertools.pairwise(reported))
    assert len(reported) > FRAMES // 2
    assert [p.name for p in out_dir.iterdir()] == [output.name]


def test_proxy_1080p_keeps_aspect_with_even_width(clip: ClipInfo, out_dir: Path) -> None:
    info = make_proxy(clip.path, out_dir / "p.mp4", PROXY_PROFILES["proxy-1080p"])
    assert (info.width, info.height) == (1964, 1080)  # 320 * 1080 / 176 = 1963.6


def test_make_proxy_keeps_pcm_audio_as_aac(tmp_path: Path, out_dir: Path) -> None:
    source = tmp_path / "av.mov"
    write_av_file(source, with_video=True)
    info = make_proxy(source, out_dir / "p.mp4", PROXY_720)
    assert (info.width, info.height, info.frames) == (960, 720, 6)
    with av.open(str(out_dir / "p.mp4")) as container:
        (audio,) = container.streams.audio
        assert (audio.codec_context.name, audio.codec_context.sample_rate) == ("aac", 48000)


@pytest.mark.parametrize("suffix", [".mp4", ".mov"])
def test_proxy_of_a_clip_with_sound_keeps_its_sound(tmp_path: Path, out_dir: Path, suffix: str) -> None:
    source = generate_test_clip(
        tmp_path / "sound.mov", name="A001C010", frames=FRAMES, size=SIZE, audio=True
    ).path
    with av.open(str(source)) as container:
        assert container.streams.audio[0].codec_context.name == "pcm_s16le"
    make_proxy(source, out_dir / f"p{suffix}", PROXY_720)
    with av.open(str(out_dir / f"p{suffix}")) as container:
        (audio,) = container.streams.audio
        assert audio.codec_context.name == "aac"
        assert audio.codec_context.layout.name == "mono"
        decoded = list(container.decode(audio=0))
    seconds = sum(frame.samples for frame in decoded) / 48000
    assert FRAMES / RATE <= seconds < FRAMES / RATE + 0.1  # the whole clip (plus AAC padding)
    loudest = max(max(abs(v) for v in frame.to_ndarray().ravel()) for frame in decoded)
    assert loudest > 0.1  # the tone survived (not silence)


def test_proxy_of_a_silent_clip_has_no_audio_stream(clip: ClipInfo, out_dir: Path) -> None:
    make_proxy(clip.path, out_dir / "p.mp4", PROXY_720)
    with av.open(str(out_dir / "p.mp4")) as container:
        assert not container.streams.audio


def test_should_stop_stops_and_leaves_no_file(clip: ClipInfo, out_dir: Path) -> None:
    polls: list[int] = []
    reported: list[float] = []

    def should_stop() -> bool:
        polls.append(1)
        return len(polls) > 3

    output = out_dir / "p.mp4"
    with pytest.raises(MediaStopped) as caught:
        make_proxy(clip.path, output, PROXY_720, progress=reported.append, should_stop=should_stop)
    assert isinstance(caught.value, MediaError)
    assert_one_line(caught.value)
    assert len(polls) == 4
    assert reported
    assert max(reported) < 1.0
    assert list(out_dir.iterdir()) == []


def test_failed_proxy_keeps_an_existing_output(clip: ClipInfo, out_dir: Path) -> None:
    output = out_dir / "p.mov"
    output.write_bytes(b"previous proxy")
    with pytest.raises(MediaStopped):
        make_proxy(clip.path, output, PROXY_720, should_stop=lambda: True)
    assert output.read_bytes() == b"previous proxy"
    assert [p.name for p in out_dir.iterdir()] == ["p.mov"]


def test_encoder_failure_is_a_media_error(clip: ClipInfo, out_dir: Path) -> None:
    for profile in (
        ProxyProfile("bad-preset", 720, preset="no-such-preset"),
        ProxyProfile("bad-encoder", 720, codec="no-such-encoder"),
    ):
        with pytest.raises(MediaError) as caught:
            make_proxy(clip.path, out_dir / "p.mp4", profile)
        assert_one_line(caught.value)
    assert list(out_dir.iterdir()) == []


# --- thumbnails -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "codec"), [("t.png", "png"), ("t.jpg", "jpeg"), ("T.JPEG", "jpeg")])
def test_make_thumbnail_writes_still_at_profile_width(
    clip: ClipInfo, out_dir: Path, name: str, codec: str
) -> None:
    output = out_dir / name
    info = make_thumbnail(clip.path, output, THUMB_640)
    assert (info.width, info.height, info.codec, info.frames) == (640, 352, codec, 1)
    assert info == probe(output)
    with Image.open(output) as image:
        assert image.size == (640, 352)
        assert image.format == codec.upper()
    assert [p.name for p in out_dir.iterdir()] == [name]


def test_thumbnail_1280_and_position(clip: ClipInfo, out_dir: Path) -> None:
    profile = THUMBNAIL_PROFILES["thumbnail-1280"]
    first = make_thumbnail(clip.path, out_dir / "first.png", profile, at=0.0)
    again = make_thumbnail(clip.path, out_dir / "again.png", profile, at=0.0)
    make_thumbnail(clip.path, out_dir / "last.png", profile, at=1.0)
    assert (first.width, first.height) == (1280, 704)
    pixels = {n: np.asarray(Image.open(out_dir / f"{n}.png")) for n in ("first", "again", "last")}
    assert again.width == 1280
    assert np.array_equal(pixels["first"], pixels["again"])
    assert changed_rows(pixels["first"], pixels["last"]).size > 0


def test_thumbnail_position_must_be_a_fraction(clip: ClipInfo, out_dir: Path) -> None:
    with pytest.raises(InvalidArgumentError):
        make_thumbnail(clip.path, out_dir / "t.png", THUMB_640, at=1.5)
    assert list(out_dir.iterdir()) == []


# --- failures ---------------------------------------------------------------------------

OPERATIONS: dict[str, Callable[[Path, Path], object]] = {
    "probe": lambda source, out_dir: probe(source),
    "proxy": lambda source, out_dir: make_proxy(source, out_dir / "p.mp4", PROXY_720),
    "thumbnail": lambda source, out_dir: make_thumbnail(source, out_dir / "t.png", THUMB_640),
}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("source_name", ["random.mov", "random.png", "empty.mp4"])
def test_corrupt_input_is_a_media_error(
    tmp_path: Path, out_dir: Path, operation: str, source_name: str
) -> None:
    source = tmp_path / source_name
    size = 0 if source_name.startswith("empty") else 64 * 1024
    source.write_bytes(np.random.default_rng(1).bytes(size))
    with pytest.raises(MediaError) as caught:
        OPERATIONS[operation](source, out_dir)
    assert_one_line(caught.value)
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_missing_input_is_a_media_error(tmp_path: Path, out_dir: Path, operation: str) -> None:
    with pytest.raises(MediaError, match="No such file"):
        OPERATIONS[operation](tmp_path / "missing.mov", out_dir)
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_audio_only_input_has_no_video(tmp_path: Path, out_dir: Path, operation: str) -> None:
    source = tmp_path / "audio.mov"
    write_av_file(source, with_video=False)
    with pytest.raises(MediaError, match="no video stream"):
        OPERATIONS[operation](source, out_dir)
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("name", ["p.avi", "p.mkv", "p"])
def test_unsupported_proxy_suffix(clip: ClipInfo, out_dir: Path, name: str) -> None:
    with pytest.raises(MediaError, match="unsupported proxy suffix"):
        make_proxy(clip.path, out_dir / name, PROXY_720)
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("name", ["t.gif", "t.tiff", "t.webp"])
def test_unsupported_thumbnail_suffix(clip: ClipInfo, out_dir: Path, name: str) -> None:
    with pytest.raises(MediaError, match="unsupported thumbnail suffix"):
        make_thumbnail(clip.path, out_dir / name, THUMB_640)
    assert list(out_dir.iterdir()) == []


def test_output_must_differ_from_source(clip: ClipInfo) -> None:
    with pytest.raises(MediaError, match="differ"):
        make_proxy(clip.path, clip.path, PROXY_720)
    assert probe(clip.path).codec == "prores"


def test_media_error_message_is_bounded_and_one_line() -> None:
    error = MediaError("first line\nsecond line\t" + "x" * 5000)
    assert_one_line(error)
    assert str(error).startswith("first line second line x")


# --- profiles ---------------------------------------------------------------------------


def test_profile_registries() -> None:
    assert {n: p.height for n, p in PROXY_PROFILES.items()} == {
        "proxy-720p": 720,
        "proxy-1080p": 1080,
    }
    assert {n: p.width for n, p in THUMBNAIL_PROFILES.items()} == {
        "thumbnail-640": 640,
        "thumbnail-1280": 1280,
    }
    assert all(p.codec == "libx264" and p.pix_fmt == "yuv420p" for p in PROXY_PROFILES.values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROXY_720.height = 480  # type: ignore[misc]
    with pytest.raises(InvalidArgumentError):
        ProxyProfile("bad", 0)
    with pytest.raises(InvalidArgumentError):
        ThumbnailProfile("bad", 0)
