"""The demo production's recipe: which clips to shoot and which "story" each one tells.

The data lives in ``resources/demo/recipe.json`` (shipped with the wheel); this module reads
and checks it. A story lists the jobs requested for an asset and what became of each:
``run`` (the reference executor ran it: it succeeded or failed on its own merits),
``abandon`` (a worker claimed it and died: the lease expired) or ``request`` (still
waiting). A story may also ``truncate`` its original before import (a broken card copy)
or ``rewrite`` it after its jobs ran (a re-delivered original that makes outputs stale).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from postproject.model.errors import InvalidArgumentError, NotFoundError

OUTCOMES = ("run", "abandon", "request")
MAKES = ("proxy", "thumbnail", "review")  # a review render: no demo worker takes one
CODECS = ("prores", "dnxhd")


@dataclass(frozen=True, slots=True)
class JobStep:
    """One job of a story: what to make, at which profile, from what, and what became of it."""

    make: str  # "proxy" | "thumbnail" | "review"
    profile: str
    source: str = "original"  # "original" | "proxy" (the proxy an earlier step of the story made)
    outcome: str = "request"  # "run" | "abandon" | "request"


@dataclass(frozen=True, slots=True)
class Story:
    name: str
    about: str
    jobs: tuple[JobStep, ...]
    truncate: float | None = None  # keep this fraction of the original's bytes before import
    hue_shift: int | None = None  # re-deliver the original with its hue shifted, after the jobs ran


@dataclass(frozen=True, slots=True)
class AssetPlan:
    name: str
    codec: str
    hue: int
    story: Story


@dataclass(frozen=True, slots=True)
class Recipe:
    size: tuple[int, int]
    frames: int
    rate: int
    originals_root: str
    outputs_root: str
    assets: tuple[AssetPlan, ...]
    extra: AssetPlan  # template for assets beyond the listed ones; its name has "{n}"

    @classmethod
    def load(cls, path: Path | None = None) -> Recipe:
        """Read a recipe (default: the shipped ``resources/demo/recipe.json``)."""
        source = path or default_path()
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
            return _recipe(data)
        except FileNotFoundError:
            raise NotFoundError(f"demo recipe {source} does not exist") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InvalidArgumentError(f"demo recipe {source} is not valid: {exc}") from exc

    def with_clip(self, *, size: tuple[int, int], frames: int) -> Recipe:
        """The same recipe with smaller (or larger) clips, e.g. for tests."""
        return dataclasses.replace(self, size=size, frames=frames)

    def plan(self, count: int, seed: int) -> list[AssetPlan]:
        """``count`` assets: the listed ones first, then numbered extras; hues vary with ``seed``."""
        if not 1 <= count <= 500:
            raise InvalidArgumentError(f"the number of demo assets must be 1-500; got {count}")
        rng = random.Random(seed)
        chosen = []
        for index in range(count):
            base = self.assets[index] if index < len(self.assets) else self.extra
            name = base.name.format(n=index + 1)
            hue = (
                (base.hue + rng.randrange(-12, 13)) % 360 if index < len(self.assets) else rng.randrange(360)
            )
            chosen.append(dataclasses.replace(base, name=name, hue=hue))
        return chosen


def default_path() -> Path:
    """``resources/demo/recipe.json`` in a source checkout, else inside the installed wheel."""
    here = Path(__file__).resolve()
    candidates = [here.parents[3] / "resources" / "demo" / "recipe.json"]
    spec = importlib.util.find_spec("postproject_gui")  # locates, never imports, the GUI package
    if spec is not None and spec.origin is not None:
        candidates.append(Path(spec.origin).parent / "resources" / "demo" / "recipe.json")
    return next((c for c in candidates if c.is_file()), candidates[0])


def _recipe(data: Mapping[str, Any]) -> Recipe:
    if data.get("format") != 1:
        raise ValueError(f"format must be 1; got {data.get('format')!r}")
    stories = {name: _story(name, body) for name, body in data["stories"].items()}
    clip, roots = data["clip"], data["roots"]
    assets = tuple(_asset(item, stories) for item in data["assets"])
    extra = _asset({"hue": 0, **data["extra_asset"]}, stories)
    if "{n" not in extra.name:
        raise ValueError("extra_asset.name must contain {n}")
    size = (_int(clip, "width", 16, 7680), _int(clip, "height", 16, 4320))
    return Recipe(
        size,
        _int(clip, "frames", 1, 10_000),
        _int(clip, "rate", 1, 240),
        str(roots["originals"]),
        str(roots["outputs"]),
        assets,
        extra,
    )


def _story(name: str, body: Mapping[str, Any]) -> Story:
    steps: list[JobStep] = []
    for item in body["jobs"]:
        step = JobStep(
            item["make"], item["profile"], item.get("from", "original"), item.get("outcome", "request")
        )
        if step.make not in MAKES or step.outcome not in OUTCOMES or step.source not in ("original", "proxy"):
            raise ValueError(f"story {name!r}: bad job {item!r}")
        if step.source == "proxy" and not any(s.make == "proxy" and s.outcome == "run" for s in steps):
            raise ValueError(f"story {name!r}: a job from the proxy needs an earlier proxy job that runs")
        steps.append(step)
    truncate = body.get("truncate")
    if truncate is not None and not 0 < float(truncate) < 1:
        raise ValueError(f"story {name!r}: truncate must be a fraction between 0 and 1")
    rewrite = body.get("rewrite")
    return Story(
        name,
        str(body.get("about", "")),
        tuple(steps),
        float(truncate) if truncate is not None else None,
        int(rewrite["hue_shift"]) if rewrite else None,
    )


def _asset(item: Mapping[str, Any], stories: Mapping[str, Story]) -> AssetPlan:
    if item["codec"] not in CODECS:
        raise ValueError(f"asset {item['name']!r}: codec must be one of {CODECS}")
    if item["story"] not in stories:
        raise ValueError(f"asset {item['name']!r}: unknown story {item['story']!r}")
    return AssetPlan(str(item["name"]), item["codec"], int(item["hue"]), stories[item["story"]])


def _int(data: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{key} must be an integer {low}-{high}; got {value!r}")
    return value
