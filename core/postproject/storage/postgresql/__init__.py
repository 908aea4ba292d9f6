"""The PostgreSQL engine: a production in one schema of a database (psycopg 3, psycopg-pool).

``uri`` parses ``postgresql://`` URIs (no driver needed to tell a URI from a path),
``errors`` translates driver errors, ``connection`` opens pooled connections bound to a
production's schema, ``schema`` creates and migrates that schema, and ``localserver`` runs a
throwaway server for tests, the demo and benchmarks.
"""

from __future__ import annotations
