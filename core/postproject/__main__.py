"""``python -m postproject``: the command line."""

from __future__ import annotations

import sys

from postproject.cli.app import console_main

if __name__ == "__main__":
    sys.exit(console_main())
