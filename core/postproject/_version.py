"""The package version (read by hatchling and by `postproject --version`)."""

from __future__ import annotations

__version__ = "0.1.0"
