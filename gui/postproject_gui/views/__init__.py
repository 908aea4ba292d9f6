"""Widgets: the main window and its parts."""
