"""Compatibility name: W3C PROV export lives in :mod:`postproject.knowledge.prov`."""

from __future__ import annotations

from postproject.knowledge.prov import MAX_EXPORT, PP_NAMESPACE, export, serialize

__all__ = ["MAX_EXPORT", "PP_NAMESPACE", "export", "serialize"]
