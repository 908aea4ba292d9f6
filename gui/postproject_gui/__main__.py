"""``python -m postproject_gui [PRODUCTION]``."""

from __future__ import annotations

import sys

from postproject_gui.app import main

if __name__ == "__main__":
    sys.exit(main())
