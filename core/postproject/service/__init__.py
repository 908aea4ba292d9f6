"""The HTTP service: the Client API and the Worker API over one production (docs/service.md).

A front end like the CLI: it calls the public API (``Production``, ``Transaction``), owns no
rule of its own and answers every error as an RFC 9457 problem by the core's stable codes.
:func:`~postproject.service.app.create_app` builds the ASGI application;
:func:`~postproject.service.server.serve` runs it under uvicorn (``postproject serve``).
Why it is the host layer of ADR 0023: docs/adr/0001-the-service-is-a-host-layer.md.

Importing this package imports neither FastAPI nor uvicorn (the ``service`` extra): the CLI
reads :mod:`.config` without them.
"""

from __future__ import annotations
