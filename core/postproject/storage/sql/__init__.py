"""What both storage adapters share, below the engine interface.

Each adapter (:mod:`postproject.storage.sqlite`, :mod:`postproject.storage.postgresql`) keeps
its connections, its transactions and the statements whose plan is its own. What both do
alike lives here once; nothing here imports a driver or an adapter.

- :mod:`.versions`  schema versions: the baseline, the migrations after it, the version checks
"""

from __future__ import annotations
