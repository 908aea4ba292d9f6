"""One object per area of the public API; ``Production`` and ``Transaction`` delegate to them.

Each module is one area and holds the area's objects, named after it: ``<Area>Operations`` is
the area's part of a ``Transaction`` (built per edit, given the edit's state and the other
areas it uses), ``<Area>Reads`` (or ``MetadataView``) its part of a ``Production`` (built
once, given the production's handle). Nothing here inherits from anything of ours: an area
that needs another is given it in its constructor. The jobs area's reads are in
``job_reads`` (``jobs`` holds the lease rules); ``search`` is the job search they page through.
A new capability is a new area object, never a new base class.
"""

from __future__ import annotations
