"""Domain values: frozen, validated on construction, free of storage concerns."""

from __future__ import annotations
