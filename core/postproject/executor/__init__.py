"""Reference executor: runs jobs on real media files with PyAV and Pillow."""

from __future__ import annotations
