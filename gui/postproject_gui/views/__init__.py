"""Widgets: the parts of the main window. They show the values they are given and emit what
the user wants as signals (intents); they never import an action (the window connects the
intents to the actions)."""
