"""Diagram drawing for provenance graphs (layout is Qt-free)."""
