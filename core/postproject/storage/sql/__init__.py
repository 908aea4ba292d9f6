"""What both storage adapters share, below the engine interface.

Each adapter (:mod:`postproject.storage.sqlite`, :mod:`postproject.storage.postgresql`) keeps
its connections, its transactions and the statements whose plan is its own (SQLite's pinned
index probes and single writer; PostgreSQL's ``SKIP LOCKED`` claims, pipelined writes and
``pp_publish``). What both do alike lives here once, written for a :class:`.dialect.Dialect`
that holds what differs (placeholders, id binding, id lists, index hints); nothing here
imports a driver or an adapter.

- :mod:`.dialect`   the dialect object (each adapter defines its own)
- :mod:`.versions`  schema versions: the baseline, the migrations after it, the version checks
- :mod:`.reads`     committed-state reads (:class:`postproject.engine.Reads`), the readers' base
- :mod:`.graph`     provenance facts (:class:`postproject.engine.GraphFacts`)
- :mod:`.writes`    an edit's statements (:class:`postproject.engine.WriteSession`), the sessions' base
- :mod:`.statements` those statements, named; :mod:`.leases` the lease transitions in SQL;
  :mod:`.created` what an edit remembers it wrote

Row decoding is :mod:`postproject.storage.rows`; job pages' filters are
:mod:`postproject.storage.job_pages`.
"""

from __future__ import annotations
