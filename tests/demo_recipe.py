"""The shipped demo recipe with small clips, for tests that run the demo's commands: the shipped
clips (960x540, 96 frames, ProRes and DNxHD) cost ~17 s of CPU to encode when the demo is
created, and more when its workers make proxies from them; 320x180 clips of a few frames take
the same path through every command at a fraction of it."""

from __future__ import annotations

import json
from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[1] / "resources" / "demo" / "recipe.json"


def small_recipe(folder: Path, frames: int = 6) -> Path:
    """Write the shipped recipe with small clips to ``folder``; its path."""
    recipe = json.loads(SHIPPED.read_text(encoding="utf-8"))
    recipe["clip"] = {"width": 320, "height": 180, "frames": frames, "rate": 24}
    path = folder / "small-recipe.json"
    path.write_text(json.dumps(recipe), encoding="utf-8")
    return path
