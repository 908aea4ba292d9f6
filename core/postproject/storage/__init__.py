"""Storage: the only package that talks to the database driver (SQLite today)."""

from __future__ import annotations
