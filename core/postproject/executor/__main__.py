"""``python -m postproject.executor``: the worker and demo commands on their own.

``demo run`` starts its workers this way, so it does not depend on the wider CLI.
"""

from __future__ import annotations

import sys

from postproject.executor.commands import main

sys.exit(main())
