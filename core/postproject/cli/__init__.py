"""The ``postproject`` command line: a thin layer over the public core API.

``app`` builds the parser and maps errors to exit codes, ``output`` is the one renderer,
``views`` turns domain values into the JSON contract, and one module per command family
(``setup``, ``jobs``, ``job_leases``, ``feed``, ``artifacts``) calls the core. See
``docs/cli.md``.
"""

from __future__ import annotations
