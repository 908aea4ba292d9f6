"""Storage adapters: the only code that talks to a database driver or holds SQL.

``sqlite/`` (a ``*.pproj`` file, the embedded default) and ``postgresql/`` (a production in
one schema of a PostgreSQL database) implement the engine interface (:mod:`postproject.engine`).
:mod:`postproject.locations` picks one for a location; nothing else above storage imports it.
"""

from __future__ import annotations
