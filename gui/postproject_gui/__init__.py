"""PostProject Monitor: the PySide6 desktop GUI."""
