"""What runs before and around the window (nothing here imports Qt at import time): the
checks and logging set up before Qt starts, the desktop entry, and headless snapshots."""
