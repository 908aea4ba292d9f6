"""The wheel and sdist as a user gets them: built, installed into fresh virtual environments
(with and without the ``gui`` extra) and exercised through their console scripts."""

from __future__ import annotations

import email
import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.demo_recipe import small_recipe

ROOT = Path(__file__).resolve().parents[2]
# One xdist worker runs these one after another, so the module's wheel is built once.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("wheel")]


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


def _run(
    command: Sequence[str | Path], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env={**_clean_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _clean_env() -> dict[str, str]:
    """The test's environment without this checkout's virtual environment on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != bin_dir)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    out = tmp_path_factory.mktemp("dist")
    built = _run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, ROOT], cwd=ROOT)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Dist(wheel, sdist)


def _environment(where: Path, requirement: str) -> Path:
    """A fresh virtual environment with ``requirement`` installed by pip (its cache and
    find-links make this fast); its bin directory. The environment gets no pip of its own: this
    one installs into it (``pip --python``), which saves the ~5 s of CPU ``ensurepip`` costs."""
    venv.EnvBuilder(with_pip=False, clear=True).create(where)
    bin_dir = where / ("Scripts" if os.name == "nt" else "bin")
    # (--no-compile: the tests import a few of the modules; compiling every one cost CPU the suite shares)
    done = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            bin_dir / "python",
            "install",
            "--quiet",
            "--no-compile",
            requirement,
        ],
        cwd=where,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return bin_dir


def test_the_distributions_carry_what_a_package_index_and_a_desktop_need(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = set(wheel.namelist())
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(wheel.read(metadata_name))
    for expected in (
        "postproject/py.typed",
        "postproject_gui/resources/desktop/org.postproject.Monitor.desktop",
        "postproject_gui/resources/desktop/org.postproject.Monitor.metainfo.xml",
        "postproject_gui/resources/icons/app.svg",
    ):
        assert expected in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert metadata["License-Expression"] == "MIT"
    assert any(c.startswith("Programming Language :: Python :: 3.11") for c in metadata.get_all("Classifier"))
    assert metadata.get_all("Project-URL") and metadata.get_all("Author")
    requires = [r.lower() for r in metadata.get_all("Requires-Dist")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert not [r for r in runtime if r.startswith("numpy")] and "platformdirs>=4" in runtime
    assert "pyside6-essentials!=6.12.0,>=6.8; extra == 'gui'" in requires  # only 6.12.0 excluded
    description = metadata.get_payload()
    assert metadata["Description-Content-Type"] == "text/markdown"
    images = [line for line in description.splitlines() if line.startswith("![")]
    assert images and all("](https://" in line for line in images)  # absolute: they render on an index
    assert "](docs/" not in description
    with tarfile.open(dist.sdist) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"LICENSE", "README.md", "pyproject.toml", "core/postproject/py.typed", "dev.py"} <= members
    assert "resources/desktop/org.postproject.Monitor.desktop" in members


def test_installed_without_the_gui_extra(dist: Dist, tmp_path: Path) -> None:
    bin_dir = _environment(tmp_path / "venv", str(dist.wheel))
    work = tmp_path / "work"
    work.mkdir()
    helped = _run([bin_dir / "postproject", "--help"], cwd=work)
    assert helped.returncode == 0 and "usage: postproject" in helped.stdout
    recipe = small_recipe(work)
    created = _run(
        [
            bin_dir / "postproject",
            "--json",
            "demo",
            "create",
            "demo.pproj",
            "--assets",
            "3",
            "--recipe",
            recipe.name,
        ],
        cwd=work,
    )
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["assets"] == 3
    counts = _run([bin_dir / "postproject", "--json", "job", "counts", "demo.pproj"], cwd=work)
    assert counts.returncode == 0 and json.loads(counts.stdout)["total"] > 0
    no_gui = _run([bin_dir / "postproject-monitor", "demo.pproj"], cwd=work)
    assert no_gui.returncode == 3
    assert "pip install 'postproject-monitor[gui]'" in no_gui.stderr and "Traceback" not in no_gui.stderr
    no_service = _run([bin_dir / "postproject", "serve", "demo.pproj"], cwd=work)
    assert no_service.returncode == 8 and "postproject-monitor[service]" in no_service.stderr
    numpy = _run([bin_dir / "python", "-c", "import numpy"], cwd=work)
    assert numpy.returncode != 0  # numpy is no dependency any more
    completion = _run([bin_dir / "postproject", "completion", "bash"], cwd=work)
    assert completion.returncode == 0 and "complete " in completion.stdout


def test_installed_with_the_gui_extra_takes_a_snapshot(dist: Dist, tmp_path: Path) -> None:
    bin_dir = _environment(tmp_path / "venv", f"postproject-monitor[gui] @ {dist.wheel.as_uri()}")
    work = tmp_path / "work"
    work.mkdir()
    made = _run([bin_dir / "postproject", "init", "show.pproj"], cwd=work)
    assert made.returncode == 0, made.stderr
    shot = _run(
        [bin_dir / "postproject-monitor", "show.pproj", "--snapshot", "jobs.png", "--view", "jobs"],
        cwd=work,
        env={"QT_QPA_PLATFORM": "offscreen"},
    )
    assert shot.returncode == 0, shot.stderr
    assert (work / "jobs.png").read_bytes().startswith(b"\x89PNG") and (work / "jobs.json").is_file()
    installed = _run(
        [bin_dir / "postproject-monitor", "--install-desktop"],
        cwd=work,
        env={"XDG_DATA_HOME": str(tmp_path / "share")},
    )
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / "share" / "applications" / "org.postproject.Monitor.desktop").is_file()
