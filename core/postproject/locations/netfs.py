"""Is a production file on a network filesystem? SQLite's WAL needs shared memory that
network filesystems do not provide (SQLite's own documentation), so the CLI and the monitor
warn; a farm should share one PostgreSQL production instead."""

from __future__ import annotations

import os
from pathlib import Path

NETWORK_TYPES = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs", "davfs",
     "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse", "fuse.glusterfs", "fuse.cephfs"}
)  # fmt: skip
MOUNTINFO = Path("/proc/self/mountinfo")


def _unescape(field: str) -> str:
    """Mount points in mountinfo escape space, tab, newline and backslash as octal."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def filesystem_type(path: str | os.PathLike[str], mountinfo: Path = MOUNTINFO) -> str | None:
    """The type of the filesystem holding ``path`` (Linux; None where it cannot be told)."""
    try:
        target = os.path.realpath(path)
        lines = mountinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    best: tuple[int, str] | None = None
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5:
            continue
        mount = _unescape(fields[4])
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and (best is None or len(mount) >= best[0]):
            best = (len(mount), right.split()[0] if right.split() else "")
    return best[1] if best else None


def network_warning(path: str | os.PathLike[str], mountinfo: Path = MOUNTINFO) -> str | None:
    """A warning when ``path`` lies on a network filesystem, else None."""
    kind = filesystem_type(path, mountinfo)
    if kind is None or kind not in NETWORK_TYPES:
        return None
    return (
        f"warning: {path} is on a network filesystem ({kind}); SQLite's WAL does not work across "
        "hosts there and the production can be corrupted. Share a PostgreSQL production "
        "(postgresql://...) with the farm instead."
    )
