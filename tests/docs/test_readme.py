"""The README's Python example runs as written (in a scratch directory with its media files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    for name in ("media/A001_C003.mov", "proxies/A001_C003.mp4"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(name.encode())
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert (tmp_path / "show.pproj").exists()


def test_readme_quick_start_has_exactly_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", quick_start, re.S)
    commands = [line for line in block.splitlines() if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["python3 dev.py demo", "python3 dev.py test"]
    assert "python3 dev.py test" in (README.parent / ".ci" / "run").read_text(encoding="utf-8")
