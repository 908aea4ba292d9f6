"""The demo's clips are kept once made (postproject.executor.clipcache): a second demo copies
them instead of encoding them again, gets the same bytes, and what a demo does to its own clips
(a truncated delivery, a re-delivered original) never reaches the kept ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from postproject.executor import clipcache, testclip
from postproject.executor.demo import create_demo
from postproject.executor.media import probe
from postproject.executor.recipe import Recipe

SMALL = Recipe.load().with_clip(size=(320, 180), frames=12)


def originals(folder: Path) -> dict[str, bytes]:
    return {clip.name: clip.read_bytes() for clip in sorted(folder.glob("*.mov"))}


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The clips PyAV encodes (by name), counted as they are made."""
    made: list[str] = []
    real = testclip.generate_test_clip

    def counted(path: Path, **kwargs: Any) -> Any:
        made.append(kwargs["name"])
        return real(path, **kwargs)

    monkeypatch.setattr(testclip, "generate_test_clip", counted)
    return made


def test_a_second_demo_copies_the_clips_the_first_one_shot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoded: list[str]
) -> None:
    """Before, every demo encoded its clips again (7 of the 11 s of CPU of a default
    `demo create`; 10.1 -> 4.1 s wall for a second one here)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = create_demo(tmp_path / "one" / "demo.pproj", assets=6, seed=3, recipe=SMALL)
    shot = len(encoded)
    assert shot >= 6  # every asset's clip, and the re-delivered ones
    kept = sorted(clipcache.folder().glob("*.mov"))
    assert len(kept) == shot
    second = create_demo(tmp_path / "two" / "demo.pproj", assets=6, seed=3, recipe=SMALL)
    assert len(encoded) == shot, f"the second demo encoded {encoded[shot:]}"
    assert originals(second.media / "originals") == originals(first.media / "originals")
    assert second.jobs == first.jobs
    for clip in kept:  # whole, though a demo truncates one of its copies ("moov atom not found")
        assert probe(clip).frames == SMALL.frames


def test_a_cache_that_cannot_be_written_only_means_the_clips_are_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoded: list[str]
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    summary = create_demo(tmp_path / "demo.pproj", assets=6, seed=3, recipe=SMALL)
    shot = len(encoded)
    assert shot >= 6 and summary.assets == 6
    create_demo(tmp_path / "again" / "demo.pproj", assets=6, seed=3, recipe=SMALL)
    assert len(encoded) == 2 * shot
    assert blocked.read_text() == "a file where the cache folder would be"


def test_clips_of_other_parameters_are_kept_apart_and_the_oldest_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(clipcache, "KEEP", 3)
    made: list[int] = []

    def make(hue: int) -> Any:
        def write(target: Path) -> None:
            made.append(hue)
            target.write_bytes(f"clip {hue}".encode())

        return write

    for hue in (0, 10, 20, 30):
        assert not clipcache.shoot(tmp_path / f"c{hue}.mov", {"hue": hue}, make(hue))
    assert clipcache.shoot(tmp_path / "again.mov", {"hue": 30}, make(30))
    assert (tmp_path / "again.mov").read_bytes() == b"clip 30"
    assert len(list(clipcache.folder().glob("*.mov"))) == 3
    assert not clipcache.shoot(tmp_path / "first.mov", {"hue": 0}, make(0))  # the oldest went
    assert made == [0, 10, 20, 30, 0]
