"""PostProject Monitor: the PySide6 desktop GUI."""

from __future__ import annotations
