"""``postproject copy`` and ``verify``: a whole production, history and live claims included."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import Cli, Scene


def _busy_scene(scene: Scene) -> tuple[str, str]:
    """Jobs in several states, metadata, an activity and a live claim with its token."""
    done = scene.request()
    scene.claim(done, "t1")
    output = scene.dir / "proxy.mov"
    output.write_bytes(b"proxy")
    scene.cli.json(
        "job", "complete", scene.path, done, str(output), "--lease-token-file", str(scene.dir / "t1")
    )
    live = scene.request("--priority", "3")
    scene.claim(live, "t2")
    scene.cli.json("job", "cancel", scene.path, scene.request())
    return done, live


def test_copy_keeps_every_fact_and_live_claims(cli: Cli, scene: Scene, tmp_path: Path) -> None:
    done, live = _busy_scene(scene)
    copy_path = str(tmp_path / "copy.pproj")
    copied = cli.json("copy", scene.path, copy_path)
    assert copied["rows"]["jobs"] == 3 and copied["rows"]["revision_events"] > 0
    verified = cli.json("verify", scene.path, copy_path)
    assert verified["equal"] is True and verified["differences"] == []
    assert verified["rows"]["job_counts"]["first"] == verified["rows"]["job_counts"]["second"]
    assert cli.json("job", "show", copy_path, done)["state"] == "succeeded"
    # the live claim's token works on the copy: same production id, same (hashed) secret
    renewed = cli.json(
        "job", "renew", copy_path, live, "--lease", "2m", "--lease-token-file", str(scene.dir / "t2")
    )
    assert renewed["state"] == "claimed"
    assert cli.json("revisions", "latest", copy_path)["revision"]["sequence"] == (
        cli.json("revisions", "latest", scene.path)["revision"]["sequence"] + 1
    )
    differ = cli("--json", "verify", scene.path, copy_path)
    assert differ.code == 4 and "differ" in differ.json["error"]["message"]


def test_copy_refuses_a_non_empty_destination_and_changes_nothing(
    cli: Cli, scene: Scene, tmp_path: Path
) -> None:
    _busy_scene(scene)
    other = str(tmp_path / "other.pproj")
    cli.json("init", other)
    cli.json("asset", "create", other, "--name", "already here")
    before = (tmp_path / "other.pproj").stat().st_size
    refused = cli("--json", "copy", scene.path, other)
    assert refused.code == 4 and "already holds" in refused.json["error"]["message"]
    assert [a["name"] for a in cli.json("asset", "list", other)["items"]] == ["already here"]
    assert (tmp_path / "other.pproj").stat().st_size == before
    missing = cli("--json", "copy", str(tmp_path / "nothing.pproj"), str(tmp_path / "new.pproj"))
    assert missing.code == 3 and not (tmp_path / "new.pproj").exists()
