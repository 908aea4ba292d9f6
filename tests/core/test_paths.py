"""File paths: media roots reached through symbolic links, links leaving a root, NUL bytes,
and file names that are not UTF-8 round-tripping through storage."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from postproject import (
    InvalidArgumentError,
    Production,
    RepresentationKind,
)


def test_a_media_root_reached_through_a_symlink_accepts_its_files(
    production: Production, tmp_path: Path, media: Callable[..., Path]
) -> None:
    real = tmp_path / "private" / "proxies"
    real.mkdir(parents=True)
    link = tmp_path / "proxies-link"
    link.symlink_to(real)  # like macOS /tmp -> /private/tmp
    (real / "A001.mov").write_bytes(b"proxy")
    with production.edit() as tx:
        tx.add_media_root("proxies", link)
        asset = tx.create_asset()
        rep = tx.add_representation(asset, RepresentationKind.PROXY, real / "A001.mov", root="proxies")
        tx.commit()
    assert production.representation(rep).path.as_posix() == "A001.mov"


def test_a_symlink_leaving_the_root_is_refused(production: Production, tmp_path: Path) -> None:
    root = tmp_path / "proxies"
    root.mkdir()
    outside = tmp_path / "secret.mov"
    outside.write_bytes(b"not in the root")
    (root / "escape.mov").symlink_to(outside)
    with production.edit() as tx:
        tx.add_media_root("proxies", root)
        asset = tx.create_asset()
        with pytest.raises(InvalidArgumentError, match="symbolic link"):
            tx.add_representation(asset, RepresentationKind.PROXY, "escape.mov", root="proxies")
        tx.commit()


def test_a_nul_byte_in_a_path_is_an_invalid_argument(production: Production) -> None:
    with production.edit() as tx:
        asset = tx.create_asset()
        with pytest.raises(InvalidArgumentError, match="NUL"):
            tx.add_representation(asset, RepresentationKind.ORIGINAL, "/tmp/a\x00b.mov")


@pytest.mark.parametrize(
    "name",
    [
        "/media/A001.mov",
        "relative/caf\u00e9.mov",
        "/media/caf\udce9.mov",
        "\x01starts-with-the-marker.mov",
        "\x01",
    ],
)
def test_every_file_name_round_trips_through_storage(name: str) -> None:
    from postproject.model import paths

    stored = paths.encode_path(name)
    stored.encode("utf-8")  # storable as text
    assert paths.decode_path(stored) == name
