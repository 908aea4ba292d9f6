"""The network-filesystem warning reads the mount table (a real mountinfo file's format)."""

from __future__ import annotations

from pathlib import Path

from postproject.locations import netfs

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
40 27 0:40 / /mnt/studio rw,relatime - nfs4 filer:/studio rw,vers=4.2
41 27 0:41 / /mnt/with\\040space rw - cifs //nas/share rw
"""


def test_files_on_nfs_and_smb_are_flagged(tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(MOUNTINFO)
    assert netfs.filesystem_type("/mnt/studio/show.pproj", table) == "nfs4"
    assert netfs.filesystem_type("/mnt/with space/show.pproj", table) == "cifs"
    assert netfs.filesystem_type("/home/ed/show.pproj", table) == "ext4"
    warning = netfs.network_warning("/mnt/studio/show.pproj", table)
    assert warning is not None and "nfs4" in warning and "postgresql://" in warning
    assert netfs.network_warning("/home/ed/show.pproj", table) is None
    assert netfs.network_warning("/mnt/studiox/show.pproj", table) is None  # not a prefix match


def test_this_machine_can_be_read(tmp_path: Path) -> None:
    assert netfs.filesystem_type(tmp_path) is not None  # /proc/self/mountinfo is there on Linux
    assert netfs.filesystem_type(tmp_path, tmp_path / "missing") is None
