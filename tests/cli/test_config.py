"""Configuration: one TOML file and POSTPROJECT_* variables; flags win; `config show` says
where each setting came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postproject import config as settings
from tests.cli.helpers import Cli, Scene


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty config directory of the user's (platformdirs honours XDG_CONFIG_HOME)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "postproject" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


def items(document: dict[str, object]) -> dict[str, dict[str, object]]:
    return {item["key"]: item for item in document["items"]}  # type: ignore[attr-defined, index]


def test_defaults_when_there_is_no_file(cli: Cli, config_file: Path) -> None:
    document = cli.json("config", "show")
    assert document["file"] == {"path": str(config_file), "exists": False}
    shown = items(document)
    assert shown["worker.concurrency"] == {
        "key": "worker.concurrency", "value": 1, "source": "default", "origin": None,
    }  # fmt: skip
    assert shown["worker.kinds"]["value"] == ["generate-proxy", "generate-thumbnail"]
    assert shown["production"]["value"] is None
    text = cli("config", "show").stdout
    assert text.startswith(f"config file: {config_file} (none there)\n")
    assert "worker.lease             60s" in text


def test_flag_beats_environment_beats_file_beats_default(
    cli: Cli, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file.write_text(
        'production = "/shows/harbour.pproj"\n'
        "[root_map]\nmedia = '/file/media'\nproxies = '/file/proxies'\n"
        "[worker]\nconcurrency = 2\nlease = '2m'\n[monitor]\ntheme = 'dark'\n"
    )
    monkeypatch.setenv("POSTPROJECT_WORKER_CONCURRENCY", "4")
    monkeypatch.setenv("POSTPROJECT_ROOT_MAP", "proxies=/env/proxies")
    shown = items(cli.json("--root-map", "media=/flag/media", "config", "show"))
    assert shown["worker.concurrency"]["value"] == 4
    assert shown["worker.concurrency"]["source"] == "env"
    assert shown["worker.concurrency"]["origin"] == "POSTPROJECT_WORKER_CONCURRENCY"
    assert (shown["worker.lease"]["value"], shown["worker.lease"]["source"]) == ("2m", "file")
    assert shown["worker.lease"]["origin"] == str(config_file)
    assert shown["monitor.theme"]["value"] == "dark"
    assert shown["production"]["value"] == "/shows/harbour.pproj"
    assert (shown["root_map.media"]["value"], shown["root_map.media"]["source"]) == ("/flag/media", "flag")
    assert (shown["root_map.proxies"]["value"], shown["root_map.proxies"]["source"]) == (
        "/env/proxies",
        "env",
    )
    text = cli("--root-map", "media=/flag/media", "config", "show").stdout
    assert "env POSTPROJECT_WORKER_CONCURRENCY" in text and "flag --root-map" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("worker = [", "is not valid TOML"),
        ("colour = 'red'\n", "unknown setting 'colour'"),
        ("[worker]\nthreads = 3\n", "unknown setting 'worker.threads'"),
        ("[worker]\nconcurrency = 99\n", "worker.concurrency must be a whole number from 1 to 16"),
        ("[worker]\nlease = '1.5s'\n", "worker.lease must be a whole number and a unit"),
        ("[monitor]\ntheme = 'pink'\n", "monitor.theme must be one of"),
        ("[root_map]\n'a/b' = '/x'\n", "root_map name"),
        ("worker = 3\n", "[worker] must be a table"),
    ],
)
def test_a_bad_file_is_invalid_argument_naming_file_and_key(
    cli: Cli, scene: Scene, config_file: Path, content: str, message: str
) -> None:
    config_file.write_text(content)
    outcome = cli("--json", "config", "show")
    assert outcome.code == 2
    error = json.loads(outcome.stdout)["error"]
    assert error["code"] == "invalid_argument"
    assert message in error["message"] and str(config_file) in error["message"]
    assert cli("asset", "list", scene.path).code == 2  # every command that reads it says so
    assert "Traceback" not in outcome.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("POSTPROJECT_WORKER_CONCURRENCY", "३"),  # a Devanagari three: int() would take it
        ("POSTPROJECT_WORKER_CONCURRENCY", "0"),
        ("POSTPROJECT_WORKER_LOG_FORMAT", "xml"),
        ("POSTPROJECT_MONITOR_VERBOSE", "perhaps"),
        ("POSTPROJECT_ROOT_MAP", "no-equals-sign"),
    ],
)
def test_a_bad_variable_is_invalid_argument_naming_it(
    cli: Cli, config_file: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    outcome = cli("--json", "config", "show")
    assert outcome.code == 2
    assert variable in outcome.json["error"]["message"]


def test_configured_root_map_makes_media_online(
    cli: Cli, scene: Scene, config_file: Path, tmp_path: Path
) -> None:
    cli.json("media-root", "add", scene.path, "shared")  # no directory stored
    (tmp_path / "here" / "shots").mkdir(parents=True)
    (tmp_path / "here" / "shots" / "A001.mov").write_bytes(b"essence")
    config_file.write_text(f"[root_map]\nshared = '{tmp_path / 'here'}'\n")
    rep = cli.json(
        "representation", "add", scene.path, scene.asset, "proxy", "shots/A001.mov", "--root", "shared"
    )["id"]
    assert cli.json("representation", "show", scene.path, rep)["availability"] == "online"
    config_file.write_text("")
    assert cli.json("representation", "show", scene.path, rep)["availability"] != "online"


def test_the_default_production_fills_a_missing_production(
    cli: Cli, scene: Scene, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = scene.request(), scene.request()
    monkeypatch.setenv("POSTPROJECT_PRODUCTION", scene.path)
    assert cli.json("job", "show", first)["id"] == first
    assert len(cli.json("job", "list", "--state", "requested")["items"]) == 2
    cancelled = cli.json("job", "cancel", first, second)
    assert [j["state"] for j in cancelled["jobs"]] == ["cancelled", "cancelled"]
    # An explicit production still wins, and a .pproj that does not exist is not replaced.
    assert cli("job", "show", str(Path(scene.path).with_name("other.pproj")), first).code == 3
    assert cli.json("asset", "list", scene.path)["items"][0]["name"] == "A001"


def test_settings_load_uses_the_user_config_directory(config_file: Path) -> None:
    assert settings.config_path() == config_file
    config_file.write_text("[worker]\nproxy_format = 'mov'\n")
    loaded = settings.load(flags={"worker.proxy_format": ("--proxy-format", None)})
    assert loaded.setting("worker.proxy_format") == settings.Setting(
        "worker.proxy_format", "mov", "file", str(config_file)
    )
