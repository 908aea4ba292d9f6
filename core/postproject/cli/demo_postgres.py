"""The demo on PostgreSQL (``python3 dev.py demo --postgres``).

``python -m postproject.cli.demo_postgres DIRECTORY MEDIA [demo run options]`` starts a
durable local server whose files live in ``DIRECTORY`` (``initdb`` on the first run; later
runs reuse the cluster; as root the server runs as the unprivileged ``postgres`` account, see
:class:`postproject.locations.LocalServer`), creates the database ``postproject_demo``
when it is missing, and runs ``postproject demo run URI --fresh --media MEDIA`` on the
production ``demo`` in it: the demo production is created again, the reference workers run
as separate processes connecting over TCP, and the monitor opens the URI.

The role's password is new at every start and reaches the workers and the monitor only
through ``PGPASSWORD``: no command line, title or log holds it. Ctrl-C, SIGTERM or closing
the monitor stops the workers (they release their claims) and then the server.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from postproject.locations import LOCAL_SERVER_ROLE as ROLE
from postproject.locations import LocalServer, interrupt_on_sigterm
from postproject.model.errors import PostProjectError

DATABASE = "postproject_demo"
PRODUCTION = "demo"


def demo_uri(server: LocalServer) -> str:
    """The demo production's URI, without a password (it comes from ``PGPASSWORD``)."""
    return f"postgresql://{ROLE}@{server.host}:{server.port}/{DATABASE}?production={PRODUCTION}"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        sys.stderr.write(
            "usage: python -m postproject.cli.demo_postgres DIRECTORY MEDIA [demo run options]\n"
        )
        return 2
    directory, media, rest = Path(args[0]), Path(args[1]), args[2:]
    from postproject.cli.app import main as cli

    try:
        with interrupt_on_sigterm(), LocalServer(directory, durable=True) as server:
            server.ensure_database(DATABASE)
            os.environ["PGPASSWORD"] = server.password
            uri = demo_uri(server)
            sys.stderr.write(f"[demo] PostgreSQL {server.version} in {directory}: {uri}\n")
            sys.stderr.flush()
            return cli(["demo", "run", uri, "--fresh", "--media", str(media), *rest])
    except KeyboardInterrupt:
        return 130
    except PostProjectError as exc:
        sys.stderr.write(f"postproject demo: {exc.message}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
