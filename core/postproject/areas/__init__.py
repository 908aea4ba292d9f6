"""One object per area of the public API; ``Production`` and ``Transaction`` delegate to them."""

from __future__ import annotations
