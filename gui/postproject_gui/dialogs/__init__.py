"""Dialogs; each exposes an ``ask(...)`` classmethod returning plain values."""
